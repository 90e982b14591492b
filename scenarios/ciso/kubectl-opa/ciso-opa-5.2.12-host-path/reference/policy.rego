package check

import rego.v1

# CIS 5.2.12: Minimize the admission of HostPath volumes: no Pod may declare a volume of type hostPath.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

violations contains pod.name if {
	some pod in input.pods
	some volume in object.get(pod.spec, "volumes", [])
	volume.hostPath
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
