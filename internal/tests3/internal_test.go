package tests3

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// On a file system without user extended attributes the metadata goes to
// a sidecar directory, and a conditional create still sees the object.
func TestSidecar(t *testing.T) {
	forceSidecar = true
	t.Cleanup(func() { forceSidecar = false })
	srv := Start(t)
	if _, err := os.Stat(filepath.Join(srv.dir, "meta")); err != nil {
		t.Fatalf("no sidecar directory: %v", err)
	}
	srv.CreateBucket("states")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	put := func() error {
		_, err := srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("states"), Key: aws.String("k.tflock"), Body: strings.NewReader("x"), IfNoneMatch: aws.String("*")})
		return err
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}
	var ae smithy.APIError
	if err := put(); !errors.As(err, &ae) || ae.ErrorCode() != "PreconditionFailed" {
		t.Fatalf("second conditional create: %v", err)
	}
}
