package exampleapi

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/example/cloud-provider-example/termsafe"
)

// A field of PEM certificates (certificate_pem, a backend's CA bundle):
// the checks they share, with messages that read after the field's name
// and never echo text outside the blocks raw.

// pemCertificatesField is such a field: its name in messages, what it
// holds (for the message of an empty one), its limits, and what to say of
// a private key in it.
type pemCertificatesField struct {
	name, holds               string
	maxBytes, maxCertificates int
	keyAdvice                 string
}

// parse reads s as the field's 1 to maxCertificates certificates, of at
// most maxBytes.
func (f pemCertificatesField) parse(s string) ([]*x509.Certificate, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("is required (%s)", f.holds)
	}
	if len(s) > f.maxBytes {
		return nil, fmt.Errorf("is %d bytes (at most %d)", len(s), f.maxBytes)
	}
	blocks, err := pemBlocks(s, f.name)
	if err != nil {
		return nil, err
	}
	return certificateBlocks(blocks, f.maxCertificates, f.keyAdvice)
}

// certificateBlocks reads blocks as at most max X.509 certificates,
// without headers; a private key among them is refused by its type only
// (the key must not reach an error), with keyAdvice.
func certificateBlocks(blocks []*pem.Block, max int, keyAdvice string) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for i, b := range blocks {
		n := i + 1
		switch {
		case strings.Contains(b.Type, "PRIVATE KEY"):
			return nil, fmt.Errorf("PEM block %d is a private key (%s); %s", n, b.Type, keyAdvice)
		case b.Type != "CERTIFICATE":
			return nil, fmt.Errorf("PEM block %d is a %q block; only CERTIFICATE blocks are accepted", n, b.Type)
		case n > max:
			return nil, fmt.Errorf("holds more than %d certificates", max)
		case len(b.Headers) > 0:
			return nil, fmt.Errorf("PEM block %d has headers (%d); a CERTIFICATE block holds the certificate only", n, len(b.Headers))
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d is not a valid X.509 certificate: %v", n, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// pemBlocks reads s, field name, as PEM blocks and whitespace only: any other text -
// before the first block, between two, after the last, or a block the PEM
// decoder skips as malformed - is refused.
func pemBlocks(s, name string) ([]*pem.Block, error) {
	var blocks []*pem.Block
	rest := []byte(s)
	for {
		trimmed := bytes.TrimLeft(rest, pemSpace)
		if len(trimmed) == 0 {
			break
		}
		at := len(s) - len(trimmed)
		if !bytes.HasPrefix(trimmed, pemBegin) {
			if b, _ := pem.Decode(trimmed); b == nil && len(blocks) == 0 {
				return nil, errors.New("holds no PEM CERTIFICATE block (expected -----BEGIN CERTIFICATE-----)")
			}
			return nil, foreignText(trimmed, at, name)
		}
		b, next := pem.Decode(trimmed)
		// The decoder skips a malformed block and reads the next one: the
		// block must be the one that starts here.
		if b == nil || bytes.Count(trimmed[:len(trimmed)-len(next)], pemBegin) != 1 {
			return nil, fmt.Errorf("PEM block %d, at byte %d, is malformed (a BEGIN line, base64, the matching END line); "+
				"%s holds PEM CERTIFICATE blocks only", len(blocks)+1, at, name)
		}
		blocks = append(blocks, b)
		rest = next
	}
	return blocks, nil
}

var pemBegin = []byte("-----BEGIN ")

// pemSpace is what may surround the blocks.
const pemSpace = " \t\r\n"

// foreignText is the error of text outside the PEM blocks of field name at
// byte at: its extent (up to the next block) and a short excerpt, escaped.
func foreignText(text []byte, at int, name string) error {
	if i := bytes.Index(text, pemBegin); i > 0 {
		text = text[:i]
	}
	text = bytes.TrimRight(text, pemSpace)
	excerpt := []rune(string(text))
	more := ""
	if len(excerpt) > 24 {
		excerpt, more = excerpt[:24], "..."
	}
	return fmt.Errorf("holds text outside its PEM blocks (%d bytes at byte %d: \"%s\"%s); %s holds "+
		"PEM CERTIFICATE blocks and whitespace only", len(text), at, strings.ReplaceAll(termsafe.Line(string(excerpt)), `"`, `\"`), more, name)
}
