package check

import rego.v1

# CIS 5.7.4: nothing but the cluster's own Service kubernetes lives in the default namespace.

default result := false

allowed(object) if {
	object.kind == "Service"
	object.name == "kubernetes"
}

violations contains sprintf("%s/%s", [object.kind, object.name]) if {
	some object in input.objects
	not allowed(object)
}

result if {
	is_array(input.objects)
	count(violations) == 0
}
