// Package reviewpage is the review page examplectl review --web serves:
// what waits for review across the cluster, what each plan does to the
// cloud, and approve, unlock and release buttons, all as the user who
// started it.
//
// It holds no credentials: it reads the plan records, events,
// PlanApprovals, StateUnlocks and AddressReleases with the user's clients
// and acts through Actions, which examplectl implements with the checks
// its approve, unlock and release commands make, so the API server's RBAC
// and the identity policy judge every read and every approval as they
// judge the CLI's.
//
// Files:
//
//	server.go     Listen (loopback only), the routes, the notes actions leave
//	guard.go      the token (URL, then a cookie), the Host, the origin, form tokens, headers
//	cache.go      every record read once, then kept by a watch of their ConfigMaps
//	live.go       changes pushed to open pages (server-sent events)
//	handlers.go   the queue, objects, object, plan and confirmation pages; approve, unlock, release
//	pages.go      templates (templates/*.html, one per page with the layout) and rendering
//	views.go      what the pages show: the queue, a plan's view, an address
//	trail.go      an object's events, approvals, unlock and release requests
//	forces.go     the attributes forcing a replacement, read from the plan's text
//	listeners.go  listener changes between the applied and the planned rendering
//	diff.go       the rendered HCL against the applied, as a unified diff
//
// The page is server-rendered HTML with one small script (static/app.js,
// the live updates) and one stylesheet, embedded: nothing is fetched from
// elsewhere at run time.
package reviewpage
