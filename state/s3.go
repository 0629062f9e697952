package state

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/redact"
)

// s3Env are the variables of the CCM's environment that terraform's s3
// backend reads: credentials (static keys, a profile, a web identity as
// EKS injects it, a container credentials endpoint), the CA bundle, and
// the SSE-C key. terraform gets them and nothing else of AWS_*; the CCM's
// own S3 client reads the same environment.
var s3Env = []string{
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
	"AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE",
	"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	"AWS_CA_BUNDLE", "AWS_SSE_CUSTOMER_KEY",
}

// s3Secrets are the values of s3Env that are secret.
var s3Secrets = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SSE_CUSTOMER_KEY"}

func (b *Backends) s3(t *Location) {
	c := b.cfg.S3
	key := t.Key + ".tfstate"
	if c.KeyPrefix != "" {
		key = strings.TrimSuffix(c.KeyPrefix, "/") + "/" + key
	}
	attrs := []Attr{
		{"bucket", cty.StringVal(c.Bucket)},
		{"key", cty.StringVal(key)},
		{"region", cty.StringVal(c.Region)},
		// S3-native lock file <key>.tflock, written with If-None-Match
		// (conditional writes): no DynamoDB table.
		{"use_lockfile", cty.True},
	}
	if c.Endpoint != "" {
		// An S3-compatible service (or a private AWS endpoint): STS and
		// IAM are not where the S3 endpoint is, so terraform must not ask
		// them who it is; the region may be any name the service uses.
		attrs = append(attrs,
			Attr{"endpoints", cty.ObjectVal(map[string]cty.Value{"s3": cty.StringVal(c.Endpoint)})},
			Attr{"skip_credentials_validation", cty.True},
			Attr{"skip_requesting_account_id", cty.True},
			Attr{"skip_region_validation", cty.True},
		)
	}
	if c.UsePathStyle {
		attrs = append(attrs, Attr{"use_path_style", cty.True})
	}
	t.Block = Block{Type: "s3", Attrs: attrs}
	for _, k := range s3Env {
		if v := os.Getenv(k); v != "" {
			t.Env[k] = v
		}
	}
	t.Exists = func(ctx context.Context) (bool, error) {
		cl, err := b.s3Client(ctx)
		if err != nil {
			return false, err
		}
		// A listing, not a HEAD: it needs no SSE-C key, and
		// s3:ListBucket is a permission terraform's backend needs anyway.
		// "<key>.tflock" sorts after "<key>", so one key is enough.
		out, err := cl.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &c.Bucket, Prefix: &key, MaxKeys: aws.Int32(1)})
		if err != nil {
			return false, s3Error("look up", c.Bucket, key, err)
		}
		return len(out.Contents) > 0 && aws.ToString(out.Contents[0].Key) == key, nil
	}
	// Terraform leaves an emptied state object after a destroy (and
	// cannot delete the default workspace): the CCM deletes it. Deleting
	// a missing key succeeds; a versioned bucket keeps older versions.
	t.Delete = func(ctx context.Context) error {
		cl, err := b.s3Client(ctx)
		if err != nil {
			return err
		}
		if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &c.Bucket, Key: &key}); err != nil {
			return s3Error("delete", c.Bucket, key, err)
		}
		return nil
	}
}

// s3Client returns a client configured as terraform's s3 backend is:
// aws-sdk-go-v2, the SDK the backend is built on, with the default
// credential chain over the same environment, the same region, endpoint
// and addressing. It is built per call (a call or two per object and
// process), so rotated credential files are read again, as each terraform
// process does; connections are shared.
func (b *Backends) s3Client(ctx context.Context) (*s3.Client, error) {
	c := b.cfg.S3
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRegion(c.Region),
		config.WithHTTPClient(b.s3HTTP),
		// S3-compatible services differ in the checksums they accept
		// (terraform's skip_s3_checksum); these calls send no body.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	)
	if err != nil {
		return nil, &scrubbedError{fmt.Sprintf("s3 client for bucket %s", c.Bucket), err}
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = c.UsePathStyle
	}), nil
}

// s3Error names the object.
func s3Error(op, bucket, key string, err error) error {
	return &scrubbedError{fmt.Sprintf("%s s3://%s/%s", op, bucket, key), err}
}

// scrubbedError's text holds no form of the s3 credentials, in case the
// SDK or a service echoes one; it still unwraps (a cancelled context).
type scrubbedError struct {
	what string
	err  error
}

func (e *scrubbedError) Error() string {
	var vs []string
	for _, k := range s3Secrets {
		vs = append(vs, os.Getenv(k))
	}
	return e.what + ": " + redact.New(vs...).String(e.err.Error())
}

func (e *scrubbedError) Unwrap() error { return e.err }
