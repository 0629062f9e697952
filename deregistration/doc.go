// Package deregistration decides which nodes each target pool forwards to
// while nodes leave: why a node leaves (Reason), and, per pool, which
// leaving nodes go in this apply and which wait (Round.Pool).
//
// A leaving node is removed from every pool it is in, in one apply of the
// pools, and the cloud drains it (no new connections, the open ones kept
// until the pool's deregistration delay ends). Two rules keep a pool
// serving while many nodes leave at once, as in a node-pool rotation:
//
//   - Waves: a pool keeps at least MinHealthyShare of the healthy
//     (Ready) nodes its selection picks, leaving ones included, and never
//     fewer than one while any is healthy. The leaving nodes past that
//     floor wait; as replacements become Ready the floor lets more go.
//   - Settling: a node that stops leaving (uncordoned, its taint gone)
//     returns only once it has stayed so for SettleTime, so a node that
//     flaps costs at most one apply out and one back.
//
// Nothing here runs terraform or reads the API server: the ccm feeds it
// the nodes from its informer and the targets the pools have, and renders
// what it decides. Its state is the time each node was last seen leaving
// or returning; a controller that restarts starts with every node
// settled.
package deregistration
