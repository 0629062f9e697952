package tfprovider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/example/cloud-provider-example/exampleapi"
)

// NewInstanceDataSource is the example_instance data source.
func NewInstanceDataSource() datasource.DataSource {
	return &dataSource[instanceModel]{name: "instance", schema: instanceSchema(), validators: instanceLookup.validators(), read: readInstance}
}

var instanceLookup = lookup[exampleapi.Instance]{
	kind: "instance", idPrefix: "i-",
	get: (*exampleapi.Client).GetInstance,
	list: func(c *exampleapi.Client, ctx context.Context, name, region string) ([]exampleapi.Instance, error) {
		return c.ListInstances(ctx, exampleapi.InstanceFilter{Name: name, Region: region})
	},
	ambiguous: func(name string, regions []string) string {
		return fmt.Sprintf("Instances named %q exist in regions %s; set region.", name, strings.Join(regions, ", "))
	},
}

func instanceSchema() schema.Schema {
	return instanceLookup.schema("Reads one instance by id or by name.",
		"Id (`i-...`) of the instance to read.", "Name of the instance to read.", instanceComputedAttributes())
}

func readInstance(ctx context.Context, data *providerData, m *instanceModel, diags *diag.Diagnostics) {
	if in := instanceLookup.read(ctx, data, m.ID, m.Name, m.Region, diags); in != nil {
		*m = instanceFromAPI(in)
	}
}
