package tests3_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tests3"
)

func put(ctx context.Context, c *s3.Client, bucket, key, body string, ifNoneMatch bool) error {
	in := &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader(body)}
	if ifNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	_, err := c.PutObject(ctx, in)
	return err
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// The properties terraform's s3 backend relies on: objects under key
// prefixes, and a conditional create (If-None-Match: *) that exactly one
// of many concurrent writers wins, as a lock file needs.
func TestConditionalWrites(t *testing.T) {
	srv := tests3.Start(t)
	srv.CreateBucket("states")
	c := srv.Client()
	ctx := testkit.Context(t)
	if err := put(ctx, c, "states", "ccm/a.tfstate", `{"version":4}`, false); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, c, "states", "ccm/a.tfstate.tflock", "1", true); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, c, "states", "ccm/a.tfstate.tflock", "2", true); code(err) != "PreconditionFailed" {
		t.Fatalf("second create of a lock file: %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = put(ctx, c, "states", "race.tflock", "x", true) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch code(err) {
		case "":
			if err != nil {
				t.Fatal(err)
			}
			won++
		case "PreconditionFailed", "ConditionalRequestConflict":
		default:
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent conditional creates succeeded, want 1", won)
	}
	got := srv.Objects("states")
	slices.Sort(got)
	if want := []string{"ccm/a.tfstate", "ccm/a.tfstate.tflock", "race.tflock"}; !slices.Equal(got, want) {
		t.Fatalf("objects on disk %q, want %q", got, want)
	}
}

// Hostile keys work, wrong ones are refused, and Stop deletes the data.
func TestCredentialsAndStop(t *testing.T) {
	secret := `s3"se/cr+et %41 ü`
	srv := tests3.Start(t, tests3.WithCredentials("ccm-access", secret))
	srv.CreateBucket("bkt")
	if err := put(testkit.Context(t), srv.Client(), "bkt", "k", "v", false); err != nil {
		t.Fatalf("hostile secret: %v", err)
	}
	srv.SecretKey = "wrong-secret"
	if err := put(testkit.Context(t), srv.Client(), "bkt", "k", "v", false); code(err) != "SignatureDoesNotMatch" {
		t.Fatalf("wrong secret: %v", err)
	}
	srv.Stop()
	if _, err := os.Stat(srv.Root); !os.IsNotExist(err) {
		t.Fatalf("root left after Stop: %v", err)
	}
}
