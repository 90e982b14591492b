package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 5.3.3.2.2: Ensure minimum password length is configured. input: {host: minlen in /etc/security/pwquality.conf}.

default result := false

ok(v) if {
    is_string(v)
    regex.match(`^[0-9]+$`, v)
    to_number(v) >= 14
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
