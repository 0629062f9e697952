package state

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/example/cloud-provider-example/internal/tests3"
	"github.com/example/cloud-provider-example/redact"
)

// s3TestEnv gives the test the AWS_* environment of srv's root account and
// nothing else of AWS_* from the test's own environment.
func s3TestEnv(t *testing.T, srv *tests3.Server) {
	for _, k := range append(s3Env, "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION") {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
}

// s3: an S3 listing against a real S3 server (versitygw) finds the state
// object, not its lock file; Delete removes it and is idempotent.
func TestExistsS3(t *testing.T) {
	secret := `s3"se/cr+et %41 ü`
	srv := tests3.Start(t, tests3.WithCredentials("ccm-exists", secret))
	srv.CreateBucket("states")
	s3TestEnv(t, srv)
	b, err := New(Config{Type: TypeS3, S3: &S3Config{Bucket: "states", Region: srv.Region, KeyPrefix: "ccm/", Endpoint: srv.Endpoint, UsePathStyle: true}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg, _ := b.LegacyLocation(web)
	key := "ccm/" + tg.Key + ".tfstate"
	if got := tg.Block.Attrs[1].Value.AsString(); got != key {
		t.Fatalf("key attribute %q, want %q", got, key)
	}
	ctx := context.Background()
	putObject := func(k string) {
		t.Helper()
		if _, err := srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("states"), Key: &k, Body: strings.NewReader(`{"version":4}`)}); err != nil {
			t.Fatal(err)
		}
	}
	mustExist(t, tg, false)
	putObject(key + ".tflock") // a lock file alone is no state
	mustExist(t, tg, false)
	putObject(key)
	mustExist(t, tg, true)
	other, _ := b.Location(web)
	mustExist(t, other, false)
	if err := tg.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	mustExist(t, tg, false)
	if got := srv.Objects("states"); !slices.Equal(got, []string{key + ".tflock"}) {
		t.Fatalf("objects on disk after Delete: %q (the lock file is not ours to delete)", got)
	}
	if err := tg.Delete(ctx); err != nil {
		t.Fatalf("second delete: %v", err)
	}

	// Refused credentials: the error names the object and holds no form
	// of either secret.
	t.Setenv("AWS_SECRET_ACCESS_KEY", `wr"ong/se+cret %zz é`)
	for op, run := range map[string]func() error{
		"exists": func() error { _, err := tg.Exists(ctx); return err },
		"delete": func() error { return tg.Delete(ctx) },
	} {
		err := run()
		if err == nil || !strings.Contains(err.Error(), "s3://states/"+key) {
			t.Fatalf("%s with a wrong secret: %v", op, err)
		}
		t.Logf("%s: %v", op, err)
		for _, pw := range []string{secret, `wr"ong/se+cret %zz é`} {
			for _, f := range redact.Forms(pw) {
				if strings.Contains(err.Error(), f) {
					t.Fatalf("%s error holds %q: %v", op, f, err)
				}
			}
		}
	}
	// A cancelled context stays recognisable through the scrubbing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tg.Exists(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// With an endpoint (an S3-compatible service), terraform must not ask STS
// or IAM who it is; without one, it does as on AWS.
func TestS3BlockEndpoint(t *testing.T) {
	names := func(c S3Config) []string {
		b, err := New(Config{Type: TypeS3, S3: &c}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tg, _ := b.Location(web)
		var out []string
		for _, a := range tg.Block.Attrs {
			out = append(out, a.Name)
		}
		return out
	}
	onAWS := names(S3Config{Bucket: "b", Region: "eu-west-1"})
	if want := []string{"bucket", "key", "region", "use_lockfile"}; !slices.Equal(onAWS, want) {
		t.Fatalf("AWS block %v, want %v", onAWS, want)
	}
	compat := names(S3Config{Bucket: "b", Region: "r", Endpoint: "http://127.0.0.1:1", UsePathStyle: true})
	for _, n := range []string{"endpoints", "skip_credentials_validation", "skip_requesting_account_id", "skip_region_validation", "use_path_style"} {
		if !slices.Contains(compat, n) {
			t.Errorf("S3-compatible block %v lacks %s", compat, n)
		}
	}
}

// terraform gets the AWS_* variables its s3 backend reads, and the
// secret ones are credentials for the redactor.
func TestS3Env(t *testing.T) {
	for _, k := range s3Env {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/ccm")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/secrets/eks.amazonaws.com/serviceaccount/token")
	t.Setenv("AWS_SSE_CUSTOMER_KEY", "c3NlLWMta2V5")
	t.Setenv("AWS_SESSION_TOKEN", "session-token-1")
	t.Setenv("AWS_REGION", "not-forwarded")
	b, _ := New(Config{Type: TypeS3, S3: &S3Config{Bucket: "b", Region: "r"}}, Options{})
	tg, _ := b.Location(web)
	got := keys(tg.Env)
	slices.Sort(got)
	if want := []string{"AWS_ROLE_ARN", "AWS_SESSION_TOKEN", "AWS_SSE_CUSTOMER_KEY", "AWS_WEB_IDENTITY_TOKEN_FILE"}; !slices.Equal(got, want) {
		t.Fatalf("env %v, want %v", got, want)
	}
	creds := b.Credentials()
	slices.Sort(creds)
	if want := []string{"c3NlLWMta2V5", "session-token-1"}; !slices.Equal(creds, want) {
		t.Fatalf("credentials %q, want %q", creds, want)
	}
}
