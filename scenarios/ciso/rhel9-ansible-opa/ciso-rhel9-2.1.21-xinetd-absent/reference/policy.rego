package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 2.1.21: Ensure xinetd is not installed. input: {host: whether xinetd is installed}.

default result := false

ok(v) if {
    is_string(v)
    v == "absent"
}

violations contains host if {
    some host, v in input
    not ok(v)
}

result if {
    is_object(input)
    count(input) > 0
    count(violations) == 0
}
