package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/gatewaycontroller"
	"github.com/example/cloud-provider-example/internal/clustertraffic"
	"github.com/example/cloud-provider-example/internal/echo"
)

// echoDeployment creates default/echo, 3 pods of example-echo, and waits
// until they are Ready: listening.
func echoDeployment(ctx context.Context, kube kubernetes.Interface) error {
	labels := map[string]string{"app": "echo"}
	_, err := kube.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "echo", Image: clustertraffic.EchoImage,
					Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 3000}}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	var d *appsv1.Deployment
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err = kube.AppsV1().Deployments("default").Get(ctx, "echo", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 3, nil
	})
	if err != nil {
		return fmt.Errorf("the echo pods were not Ready (see pods/ and traffic.log in the demo's directory): %w", err)
	}
	pods, err := kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=echo"})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		fmt.Printf("    pod %-26s Ready on %-20s at %s\n", p.Name, p.Spec.NodeName, p.Status.PodIP)
	}
	return nil
}

// curl GETs url (Host host, if set) until a pod answers, and prints who.
func curl(ctx context.Context, url, host string) error {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var a echo.Answer
	var status int
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		if host != "" {
			req.Host = host
		}
		res, err := c.Do(req)
		if err != nil {
			return false, nil
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		status = res.StatusCode
		return status == http.StatusOK && json.Unmarshal(body, &a) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("no pod answered %s (last status %d): %w", url, status, err)
	}
	fmt.Printf("    HTTP 200 from pod %s (namespace %s): it saw %s %s, Host %s\n", a.Pod, a.Namespace, a.Method, a.Path, a.Host)
	return nil
}

// gateway creates a GatewayClass of this controller, Gateway default/demo
// and HTTPRoute default/echo for echo.example.test to Service echo, waits
// for the Gateway's address and curls it by host name.
func (d *demo) gateway(ctx context.Context) (string, error) {
	step("Gateway API: GatewayClass example (this controller), Gateway default/demo (http on 80), HTTPRoute default/echo (echo.example.test to Service echo)")
	gw, err := gwclient.NewForConfig(d.cluster.Admin)
	if err != nil {
		return "", err
	}
	if _, err := gw.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewaycontroller.ControllerName}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if _, err := gw.GatewayV1().Gateways("default").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "demo"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		}}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if _, err := gw.GatewayV1().HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "demo"}}},
			Hostnames:       []gatewayv1.Hostname{"echo.example.test"},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "echo", Port: ptr.To[gatewayv1.PortNumber](80)}}}}}},
		}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	var ip string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		g, err := gw.GatewayV1().Gateways("default").Get(ctx, "demo", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(g.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)) || len(g.Status.Addresses) == 0 {
			return false, nil
		}
		ip = g.Status.Addresses[0].Value
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("the Gateway was not programmed (see ccm.log): %w", err)
	}
	fmt.Printf("    Gateway default/demo programmed, address %s\n", ip)
	if err := routeRules(ctx, gw); err != nil {
		return "", err
	}
	step("curl -H 'Host: echo.example.test' http://" + ip + "/ (the Gateway's load balancer, its route's rule, a pod)")
	return ip, curl(ctx, "http://"+ip+"/", "echo.example.test")
}

// routeRules waits for, and prints, where HTTPRoute default/echo's rules
// stand on the Gateway's load balancer, as its status says.
func routeRules(ctx context.Context, gw gwclient.Interface) error {
	var c *metav1.Condition
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		r, err := gw.GatewayV1().HTTPRoutes("default").Get(ctx, "echo", metav1.GetOptions{})
		if err != nil || len(r.Status.Parents) == 0 {
			return false, nil
		}
		c = meta.FindStatusCondition(r.Status.Parents[0].Conditions, gatewaycontroller.RulesProgrammed)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})
	if err != nil {
		return fmt.Errorf("the route's rules were not applied (its condition %s: %+v; see ccm.log): %w", gatewaycontroller.RulesProgrammed, c, err)
	}
	fmt.Printf("    HTTPRoute default/echo: %s %s (%s)\n", gatewaycontroller.RulesProgrammed, c.Reason, c.Message)
	return nil
}
