package renderer

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/lbmodel"
)

// ruleValue is r as the module takes it: what is unset is left out
// (the module's optional attributes read it as null).
func ruleValue(r lbmodel.Rule) cty.Value {
	attrs := map[string]cty.Value{
		"name":          cty.StringVal(r.Name),
		"listener_port": cty.NumberIntVal(int64(r.ListenerPort)),
	}
	// Numbered, or ordered by key (docs/adr/0028): one or the other.
	if r.OrderKey != "" {
		attrs["order_key"] = cty.StringVal(r.OrderKey)
	} else {
		attrs["priority"] = cty.NumberIntVal(int64(r.Priority))
	}
	setString(attrs, "listener_protocol", r.ListenerProtocol)
	if r.Hostname != "" {
		attrs["hostnames"] = stringList([]string{r.Hostname})
	}
	if r.PathType != "" {
		attrs["path_type"], attrs["path"] = cty.StringVal(r.PathType), cty.StringVal(r.Path)
	}
	setString(attrs, "method", r.Method)
	if len(r.Headers) > 0 {
		attrs["headers"] = stringMap(r.Headers)
	}
	if len(r.QueryParams) > 0 {
		attrs["query_params"] = stringMap(r.QueryParams)
	}
	if len(r.Backends) > 0 {
		bs := make([]cty.Value, len(r.Backends))
		for i, b := range r.Backends {
			backend := map[string]cty.Value{
				"target_pool_id": cty.StringVal(b.TargetPoolID),
				"port":           cty.NumberIntVal(int64(b.Port)),
				"weight":         cty.NumberIntVal(int64(b.Weight)),
			}
			setString(backend, "protocol", b.Protocol)
			if t := b.TLS; t != nil {
				tls := map[string]cty.Value{"ca_bundle": cty.StringVal(t.CABundle), "server_name": cty.StringVal(t.ServerName)}
				if len(t.SubjectAltNames) > 0 {
					tls["subject_alt_names"] = stringList(t.SubjectAltNames)
				}
				backend["tls"] = cty.ObjectVal(tls)
			}
			bs[i] = cty.ObjectVal(backend)
		}
		// A tuple: backends differ in the attributes they set.
		attrs["backends"] = cty.TupleVal(bs)
	}
	if rd := r.Redirect; rd != nil {
		red := map[string]cty.Value{"status_code": cty.NumberIntVal(int64(rd.StatusCode))}
		setString(red, "scheme", rd.Scheme)
		setString(red, "hostname", rd.Hostname)
		setInt(red, "port", rd.Port)
		setPaths(red, rd.Path, rd.PathPrefix)
		attrs["redirect"] = cty.ObjectVal(red)
	}
	if rw := r.Rewrite; rw != nil {
		rew := map[string]cty.Value{}
		setString(rew, "hostname", rw.Hostname)
		setPaths(rew, rw.Path, rw.PathPrefix)
		attrs["rewrite"] = cty.ObjectVal(rew)
	}
	if f := r.FixedResponse; f != nil {
		attrs["fixed_response"] = cty.ObjectVal(map[string]cty.Value{"status_code": cty.NumberIntVal(int64(f.StatusCode))})
	}
	if h := r.RequestHeaders; h != nil {
		attrs["request_headers"] = headerChangesValue(*h)
	}
	if h := r.ResponseHeaders; h != nil {
		attrs["response_headers"] = headerChangesValue(*h)
	}
	if t := r.Timeouts; t != nil {
		timeouts := map[string]cty.Value{}
		setInt(timeouts, "request_ms", t.RequestMS)
		setInt(timeouts, "backend_request_ms", t.BackendRequestMS)
		attrs["timeouts"] = cty.ObjectVal(timeouts)
	}
	if rt := r.Retry; rt != nil {
		retry := map[string]cty.Value{"attempts": cty.NumberIntVal(int64(rt.Attempts))}
		if len(rt.StatusCodes) > 0 {
			codes := make([]cty.Value, len(rt.StatusCodes))
			for i, c := range rt.StatusCodes {
				codes[i] = cty.NumberIntVal(int64(c))
			}
			retry["status_codes"] = cty.ListVal(codes)
		}
		setInt(retry, "backoff_ms", rt.BackoffMS)
		attrs["retry"] = cty.ObjectVal(retry)
	}
	if c := r.CORS; c != nil {
		cors := map[string]cty.Value{"allow_origins": stringList(c.AllowOrigins)}
		for name, vals := range map[string][]string{"allow_methods": c.AllowMethods, "allow_headers": c.AllowHeaders, "expose_headers": c.ExposeHeaders} {
			if len(vals) > 0 {
				cors[name] = stringList(vals)
			}
		}
		if c.AllowCredentials {
			cors["allow_credentials"] = cty.True
		}
		setInt(cors, "max_age_seconds", c.MaxAgeSeconds)
		attrs["cors"] = cty.ObjectVal(cors)
	}
	if s := r.SessionPersistence; s != nil {
		attrs["session_persistence"] = sessionValue(*s)
	}
	return cty.ObjectVal(attrs)
}

// setString sets s in attrs unless it is empty, which the model uses for
// unset: the module reads a left-out attribute as null.
func setString(attrs map[string]cty.Value, name, s string) {
	if s != "" {
		attrs[name] = cty.StringVal(s)
	}
}

// setInt is setString for numbers, 0 being unset (a duration of 0: none).
func setInt(attrs map[string]cty.Value, name string, n int) {
	if n != 0 {
		attrs[name] = cty.NumberIntVal(int64(n))
	}
}

// setPaths sets a redirect's or rewrite's path and path_prefix in attrs,
// those that are set.
func setPaths(attrs map[string]cty.Value, path, prefix string) {
	setString(attrs, "path", path)
	setString(attrs, "path_prefix", prefix)
}

// headerChangesValue is a request_headers or response_headers object,
// what is unset left out.
func headerChangesValue(h lbmodel.HeaderChanges) cty.Value {
	changes := map[string]cty.Value{}
	if len(h.Set) > 0 {
		changes["set"] = stringMap(h.Set)
	}
	if len(h.Add) > 0 {
		changes["add"] = stringMap(h.Add)
	}
	if len(h.Remove) > 0 {
		changes["remove"] = stringList(h.Remove)
	}
	return cty.ObjectVal(changes)
}

// rulesValue is the module's rules input: a tuple, as rules differ
// in the attributes they set.
func rulesValue(rules []lbmodel.Rule) cty.Value {
	vs := make([]cty.Value, len(rules))
	for i, r := range rules {
		vs[i] = ruleValue(r)
	}
	return cty.TupleVal(vs)
}
