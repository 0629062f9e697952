package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"
)

// terminal is a reader that knows whether it is a terminal (the tests'
// typed answers).
type terminal interface{ IsTerminal() bool }

// stdinIsTerminal says whether confirmation can be asked on in.
func stdinIsTerminal(in io.Reader) bool {
	switch in := in.(type) {
	case terminal:
		return in.IsTerminal()
	case *os.File:
		return term.IsTerminal(int(in.Fd()))
	}
	return false
}

// confirmation is a question asked before examplectl creates an object
// as you: what to weigh, then the question itself (its cluster texts
// already inert); what is refused without a terminal (scripts confirm
// with yes, --yes).
type confirmation struct {
	stdin          io.Reader
	stdout         io.Writer
	yes            bool
	what, question string
}

// confirmAs shows what tw holds, learns who you are (the name the object
// created next carries), then asks q: it returns your username once you
// confirm.
func (c *cluster) confirmAs(ctx context.Context, tw *tabwriter.Writer, q confirmation) (string, error) {
	if err := tw.Flush(); err != nil {
		return "", err
	}
	me, err := c.whoami(ctx)
	if err != nil {
		return "", err
	}
	return me.Username, q.ask()
}

// ask asks q on the terminal, unless q.yes; without a terminal it
// refuses. Any answer but y or yes changes nothing.
func (q confirmation) ask() error {
	if q.yes {
		return nil
	}
	if !stdinIsTerminal(q.stdin) {
		return fmt.Errorf("refusing to %s without confirmation: stdin is not a terminal (pass --yes)", q.what)
	}
	fmt.Fprintf(q.stdout, "%s [y/N]: ", q.question)
	answer, _ := bufio.NewReader(q.stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return errors.New("not confirmed: nothing changed")
	}
	return nil
}
