// Package webhook serves the controller's admission webhooks over HTTPS.
//
// Handler turns an AdmitFunc into an admission.k8s.io/v1 AdmissionReview
// endpoint (fail-open: a panic answers allowed with a warning), and Serve
// runs them on one TLS port with /healthz. Every replica serves, leader or
// not, so the serving certificate comes from a CertSource read on each
// handshake, and rotation needs no restart. Two certificate modes:
//
//   - self-managed (default): SelfManaged keeps a CA and a serving
//     certificate in one Secret shared by all replicas, renews them before
//     they expire (the old CA stays in the bundle until it expires) and
//     injects the CA bundle into the webhook configurations;
//   - files: FromFiles reads a certificate issued by cert-manager from a
//     mounted Secret and reloads it when the files change; cert-manager
//     injects the CA (cert-manager.io/inject-ca-from).
package webhook
