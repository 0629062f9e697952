package tfprovider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Defaults of the optional load balancer arguments; the API applies the
// same ones, the provider states them so plans show real values.
const (
	defaultLBType          = "lb-small"
	defaultIPFamily        = exampleapi.IPFamilyIPv4
	defaultAlgorithm       = exampleapi.AlgorithmRoundRobin
	defaultHCInterval      = 10
	defaultHCTimeout       = 5
	defaultHCHealthyThresh = 3
	defaultHCUnhealthyThr  = 3
)

func quoted(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}

func (r *loadBalancerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	ipFamily := defaultedChoice(defaultIPFamily, exampleapi.IPFamilies, "One of "+quoted(exampleapi.IPFamilies)+
		"; `dualstack` also allocates an IPv6 address. Defaults to `"+defaultIPFamily+"`. Changing it replaces the load balancer.")
	ipFamily.PlanModifiers = []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		// Version 1: listeners became a map keyed "<protocol>/<port>"
		// (version 0 had a list); UpgradeState converts old states.
		Version: 1,
		Description: "A load balancer forwarding TCP, UDP, TLS (passed through), HTTP and HTTPS listener ports (HTTPS ending " +
			"TLS at the load balancer with `example_certificate`s) to target instances, listed in `targets` or " +
			"held by a target pool (`target_pool_id`); listeners may route by `rules` to target pools instead (`http` and " +
			"`https` by host, path, method and headers, `tls` by SNI name, `tcp` and `udp` all their connections). Creation waits " +
			"until the load balancer is `active`; `name`, `region`, `internal` and `ip_family` cannot change " +
			"without replacing it, every other argument is updated in place. With `on_name_conflict = \"" + onNameConflictAdopt + "\"`, " +
			"a create that finds its name taken by a load balancer with matching tags (left by an interrupted apply) adopts it. " +
			"`owner_tags` makes imports and adoptions prove ownership.",
		Attributes: map[string]schema.Attribute{
			"id":   computedStable("Load balancer id (`lb-...`)."),
			"name": nameAttribute("Name, unique per region. Changing it replaces the load balancer."),
			"region": regionAttribute("Region, e.g. `ex-west-1`. Defaults to the provider's `region`. " +
				"Changing it replaces the load balancer."),
			"type": defaultedChoice(defaultLBType, exampleapi.LoadBalancerTypes,
				"Size: one of "+quoted(exampleapi.LoadBalancerTypes)+". Defaults to `"+defaultLBType+"`. Updated in place."),
			"internal": schema.BoolAttribute{
				Optional:      true,
				Computed:      true,
				Default:       booldefault.StaticBool(false),
				Description:   "Whether the load balancer gets a private address (`10.255.0.0/16`) instead of a public one. Defaults to `false`. Changing it replaces the load balancer.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			},
			"ip_family": ipFamily,
			"algorithm": defaultedChoice(defaultAlgorithm, exampleapi.Algorithms,
				"Balancing algorithm: one of "+quoted(exampleapi.Algorithms)+". Defaults to `"+defaultAlgorithm+"`."),
			"listeners":            listenersAttribute(),
			"rules":                rulesAttribute(),
			"health_check":         healthCheckAttribute(),
			"allowed_source_cidrs": cidrSetAttribute(),
			"targets": schema.SetAttribute{
				Optional:    true,
				ElementType: stringType,
				Description: fmt.Sprintf("Ids (`i-...`) of the instances traffic is forwarded to (at most %d); they must be in the "+
					"load balancer's region. Order does not matter. Leave it unset or empty with `target_pool_id`.", exampleapi.MaxTargets),
				Validators: targetsValidators(),
			},
			"target_pool_id": schema.StringAttribute{
				Optional: true,
				Description: "Id (`tp-...`) of a target pool (`example_target_pool`) of the load balancer's region to forward " +
					"traffic to, instead of listing `targets` (setting both, with `targets` not empty, is an error). The load " +
					"balancer follows the pool: a change of the pool's targets re-targets every load balancer using it at " +
					"once, without a change of the load balancer (its `targets` stay empty, so plans of the load balancer " +
					"do not show it). Moving to another pool, or between a pool and `targets`, is updated in place.",
				Validators: []validator.String{idValidator("tp-")},
			},
			"tags": tagsAttribute(defaultTagsDescription),
			"owner_tags": ownerTagsAttribute("Keys of `tags` whose values name the owner, such as a cluster id and the id of the object " +
				"the load balancer serves. Taking over an existing load balancer requires it to carry none of these " +
				"tags with another value: an import (an `import` block or `terraform import`) fails at plan time, " +
				"and `on_name_conflict` adoption fails, when for any of these keys the existing load balancer has " +
				"the tag with a value other than this configuration's `tags` value for that key (or this " +
				"configuration does not set that tag): its tags show another owner. A load balancer without these " +
				"tags, or with the same values, may be taken over. Unset or empty, no owner is checked. " +
				"Configuration only: changing it updates state only."),
			"status": schema.StringAttribute{
				Computed:      true,
				Description:   "`active` once provisioned; `provisioning` or `error` while a failed creation is tracked (tainted).",
				PlanModifiers: []planmodifier.String{activeAfterUpdate{}},
			},
			"ipv4": computedStable("IPv4 address: public, or from `10.255.0.0/16` when `internal`. With an ipv4 `example_address` " +
				"attached, the address's `ip`: attaching, moving or detaching one changes it, which the next refresh shows."),
			"ipv6": computedStable("IPv6 address (`dualstack` only), null otherwise; an attached ipv6 `example_address`'s `ip`, " +
				"as for `ipv4`."),
			"hostname":   computedStable("DNS name of the load balancer."),
			"created_at": computedStable("Creation time (RFC 3339, UTC)."),
			"timeouts":   timeoutsAttribute(ctx),
			"on_name_conflict": choiceAttribute("What creating does when the name is already taken in the region (the API answers `409`), "+
				"typically by a load balancer that an apply killed mid-way created but never recorded in state: "+
				"`"+onConflictError+"` (default) fails the apply; `"+onNameConflictAdopt+"` adopts that load "+
				"balancer if no tag of `owner_tags` names another owner (as for imports), its tags contain every "+
				"configured tag with the same value (so `tags` must not be empty: they are the proof of ownership) "+
				"and its `internal` and `ip_family` match, updates it to this "+
				"configuration, records it in state and reports a warning. Otherwise the apply fails explaining the "+
				"conflict. Only consulted on create; changing it updates state only.", onConflictError, onNameConflictAdopt),
		},
	}
	resp.Schema.Attributes = withTypes(resp.Schema.Attributes)
}

func listenersAttribute() schema.MapNestedAttribute {
	port := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{Required: true, Description: desc, Validators: []validator.Int64{int64validator.Between(1, 65535)}}
	}
	return schema.MapNestedAttribute{
		Required: true,
		Description: fmt.Sprintf("Listeners, at least one and at most %d, keyed by `\"<protocol>/<port>\"` of the listener, "+
			"e.g. `\"tcp/80\"` (so ports are unique per protocol; `tcp`, `tls`, `http` and `https` listeners also share the "+
			"TCP ports, so `\"tcp/443\"` and `\"https/443\"` cannot both exist, while `\"udp/443\"` can). Keyed this way, a plan shows a changed `port` as one "+
			"listener removed and one added, and any other change of a listener (its `target_port`, its certificates) as "+
			"that one listener updated in place; the other listeners read as unchanged.", exampleapi.MaxListeners),
		// The maximum is checked in ValidateConfig, with the cloud's
		// limit named in the message.
		Validators: []validator.Map{mapvalidator.SizeAtLeast(1)},
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"protocol": schema.StringAttribute{
					Required: true,
					Description: "One of " + quoted(exampleapi.ListenerProtocols) + "; the first part of the key. `tcp` and `udp` " +
						"forward connections (TLS passes through); `tls` forwards TCP connections too, routed by the SNI name of " +
						"their TLS ClientHello (TLS passes through: the targets hold the certificates); `http` and `https` forward " +
						"HTTP requests, `https` ending TLS at the load balancer with `certificate_ids`.",
					Validators: []validator.String{stringvalidator.OneOf(exampleapi.ListenerProtocols...)},
				},
				"port":        port("Port the load balancer listens on (1-65535); the second part of the key."),
				"target_port": port("Port on the targets traffic is forwarded to (1-65535); required, and unused, with `redirect_to_https_port`."),
				"proxy_protocol": schema.BoolAttribute{
					Optional:    true,
					Computed:    true,
					Default:     booldefault.StaticBool(false),
					Description: "Whether to prepend the PROXY protocol header. Defaults to `false`.",
				},
				"certificate_ids": schema.ListAttribute{
					Optional:    true,
					ElementType: stringType,
					Description: fmt.Sprintf("Ids (`cert-...`) of `example_certificate`s of the load balancer's region that an `https` "+
						"listener serves (required for `https`, not allowed otherwise; 1-%d, no duplicates). The first is served to "+
						"clients whose SNI name matches none of the others; the others are chosen by SNI. Changing them updates the "+
						"load balancer in place: that is how a certificate is rotated.", exampleapi.MaxListenerCertificates),
					Validators: []validator.List{
						listvalidator.SizeBetween(1, exampleapi.MaxListenerCertificates),
						listvalidator.UniqueValues(),
						listvalidator.ValueStringsAre(idValidator("cert-")),
					},
				},
				"redirect_to_https_port": schema.Int64Attribute{
					Optional: true,
					Description: "`http` listeners only: answer every request with a `301` redirect to `https://<host>:<port><path>` " +
						"instead of forwarding it. The port must be that of an `https` listener of this load balancer. Unset: no redirect.",
					Validators: []validator.Int64{int64validator.Between(1, 65535)},
				},
				"sticky_sessions": schema.SingleNestedAttribute{
					Optional: true,
					Description: "`http` and `https` listeners only (not with `redirect_to_https_port`): pin each client to one target " +
						"with a cookie the load balancer sets. Unset: no affinity.",
					Attributes: map[string]schema.Attribute{
						"cookie_name": schema.StringAttribute{
							Required:    true,
							Description: "Name of the cookie the load balancer sets: 1-64 letters, digits and ``!#$%&'*+-.^_`|~``.",
							Validators: []validator.String{stringvalidator.RegexMatches(cookieNameRE,
								"must be 1-64 letters, digits and !#$%&'*+-.^_`|~ (an RFC 6265 cookie name)")},
						},
						"ttl_seconds": schema.Int64Attribute{
							Required:    true,
							Description: "How long a client stays on its target, in seconds (1-604800, 7 days).",
							Validators:  []validator.Int64{int64validator.Between(1, 604800)},
						},
					},
				},
			},
		},
	}
}

func healthCheckAttribute() schema.SingleNestedAttribute {
	num := func(desc string, def, lo, hi int64) schema.Int64Attribute {
		return schema.Int64Attribute{
			Optional:    true,
			Computed:    true,
			Default:     int64default.StaticInt64(def),
			Description: desc,
			Validators:  []validator.Int64{int64validator.Between(lo, hi)},
		}
	}
	return schema.SingleNestedAttribute{
		Optional:    true,
		Description: "How targets are probed. Without it targets are not health checked.",
		Attributes: map[string]schema.Attribute{
			"protocol": schema.StringAttribute{
				Required:    true,
				Description: "One of " + quoted(exampleapi.HealthCheckProtocols) + ".",
				Validators:  []validator.String{stringvalidator.OneOf(exampleapi.HealthCheckProtocols...)},
			},
			"port": schema.Int64Attribute{
				Required:    true,
				Description: "Port probed on the targets (1-65535).",
				Validators:  []validator.Int64{int64validator.Between(1, 65535)},
			},
			"path": schema.StringAttribute{
				Optional:    true,
				Description: "HTTP path, starting with `/`. Required for, and only allowed with, `protocol` `http` or `https`.",
				Validators: []validator.String{stringvalidator.RegexMatches(leadingSlashRE, "must start with /"),
					stringvalidator.LengthAtMost(1024)},
			},
			"interval_seconds":    num("Seconds between probes (1-300). Defaults to `10`.", defaultHCInterval, 1, 300),
			"timeout_seconds":     num("Probe timeout in seconds (1-60), less than `interval_seconds`. Defaults to `5`.", defaultHCTimeout, 1, 60),
			"healthy_threshold":   num("Successes before a target is healthy (1-10). Defaults to `3`.", defaultHCHealthyThresh, 1, 10),
			"unhealthy_threshold": num("Failures before a target is unhealthy (1-10). Defaults to `3`.", defaultHCUnhealthyThr, 1, 10),
		},
	}
}

func cidrSetAttribute() schema.SetAttribute {
	return schema.SetAttribute{
		Optional:    true,
		ElementType: stringType,
		Description: fmt.Sprintf("Source CIDRs (IPv4 or IPv6, canonical form such as `192.0.2.0/24`) allowed to connect, "+
			"at most %d; unset allows everyone. Order does not matter.", exampleapi.MaxAllowedSourceCIDRs),
		Validators: []validator.Set{
			setvalidator.SizeAtMost(exampleapi.MaxAllowedSourceCIDRs),
			setvalidator.ValueStringsAre(cidrValidator),
		},
	}
}

func timeoutsAttribute(ctx context.Context) schema.Attribute {
	a := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true,
		CreateDescription: "How long to wait for a new load balancer to become `active`, e.g. `\"15m\"`. Defaults to `10m`.",
		UpdateDescription: "How long to wait for an update to finish. Defaults to `10m`.",
		DeleteDescription: "How long to wait for a deletion to finish. Defaults to `5m`.",
	})
	if sa, ok := a.(schema.SingleNestedAttribute); ok {
		sa.Description = "Operation timeouts, as durations such as `\"30s\"` or `\"15m\"`: `create`, `update`, `delete`."
		return sa
	}
	return a
}
