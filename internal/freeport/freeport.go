// Package freeport finds loopback TCP ports for the servers that tests and
// the demo start.
package freeport

import "net"

// Loopback returns n ports of 127.0.0.1 that were free a moment ago (all
// held open together, so they differ).
func Loopback(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// One is Loopback(1)'s port.
func One() (int, error) {
	ports, err := Loopback(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
