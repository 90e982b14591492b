package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 5.1.5: Ensure sshd Banner is configured. input: {host: Banner as /etc/ssh/sshd_config sets it}.

default result := false

ok(v) if {
    is_string(v)
    v != ""
    v != "none"
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
