package tfprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// EnvPrivateKeys is where example_private_keys reads the private keys: a
// JSON object of PEM keys by name, in the provider's environment. A fixed
// name, so a configuration cannot point the resource at another variable
// (such as EXAMPLE_TOKEN).
const EnvPrivateKeys = "EXAMPLE_PRIVATE_KEYS"

var _ ephemeral.EphemeralResource = (*privateKeysResource)(nil)

// privateKeysResource hands private keys from the environment to
// write-only arguments (example_certificate's private_key_wo), so that
// they reach neither a file, a saved plan nor the state.
type privateKeysResource struct {
	getenv func(string) string
}

type privateKeysModel struct {
	Names types.List `tfsdk:"names"`
	Keys  types.Map  `tfsdk:"keys"`
}

func (p *exampleProvider) newPrivateKeysResource() ephemeral.EphemeralResource {
	return &privateKeysResource{getenv: p.getenv}
}

func (r *privateKeysResource) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_private_keys"
}

func (r *privateKeysResource) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Private keys (PEM) read from the provider's environment variable `" + EnvPrivateKeys + "`, a JSON object " +
			"of keys by name, for write-only arguments such as `example_certificate`'s `private_key_wo`. Ephemeral (Terraform " +
			"1.10+): the keys are read at plan and again at apply, and are in no file, saved plan or state. The cloud " +
			"controller manager sets the variable for the terraform processes of a Service whose TLS Secrets it read.",
		Attributes: map[string]schema.Attribute{
			"names": schema.ListAttribute{
				Required:    true,
				ElementType: types.StringType,
				Description: "The keys to read: each must be in `" + EnvPrivateKeys + "`, or opening fails naming it.",
				Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()},
			},
			"keys": schema.MapAttribute{
				Computed:    true,
				Sensitive:   true,
				ElementType: types.StringType,
				Description: "The private keys of `names`, by name.",
			},
		},
	}
}

func (r *privateKeysResource) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	var m privateKeysModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var names []string
	resp.Diagnostics.Append(m.Names.ElementsAs(ctx, &names, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	all, err := privateKeys(r.getenv(EnvPrivateKeys))
	if err != nil {
		resp.Diagnostics.AddError("Private keys unavailable", err.Error())
		return
	}
	keys := map[string]string{}
	var missing []string
	for _, n := range names {
		k, ok := all[n]
		if !ok || k == "" {
			missing = append(missing, fmt.Sprintf("%q", n))
			continue
		}
		keys[n] = k
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		resp.Diagnostics.AddError("Private keys unavailable",
			fmt.Sprintf("%s holds no private key named %s.", EnvPrivateKeys, strings.Join(missing, ", ")))
		return
	}
	v, diags := types.MapValueFrom(ctx, types.StringType, keys)
	resp.Diagnostics.Append(diags...)
	m.Keys = v
	resp.Diagnostics.Append(resp.Result.Set(ctx, &m)...)
}

// privateKeys decodes the environment variable; its errors never quote
// it.
func privateKeys(raw string) (map[string]string, error) {
	if raw == "" {
		return nil, fmt.Errorf("the environment variable %s is not set: it must hold the private keys, a JSON object of PEM keys by name", EnvPrivateKeys)
	}
	var keys map[string]string
	if err := json.Unmarshal([]byte(raw), &keys); err != nil {
		return nil, fmt.Errorf("the environment variable %s is not a JSON object of PEM keys by name", EnvPrivateKeys)
	}
	return keys, nil
}
