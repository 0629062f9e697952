// Package preview says, in a reviewer's words, what an edit of a
// LoadBalancer Service would do to the cloud before it is stored: the
// resources a speculative plan adds, changes, replaces or destroys, the
// listeners added, removed or changed, the policy rule that would hold
// the plan for approval, and the controller's own refusals. The admission
// webhook returns these as kubectl warnings; examplectl preview prints
// them. It also decides the review.example.com/author stamp (author.go).
package preview
