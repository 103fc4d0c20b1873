#!/usr/bin/env bash
# The alert rules shipped in monitoring/prometheus/ (docs/monitoring.md), stage alert_rules of
# tools/test.sh: `promtool check rules` on every rule file, `promtool test rules` on every test file
# of tests/monitoring/, and every alert of the rules named by a test case that expects it to fire
# and by one that expects it quiet (exp_alerts: []). promtool comes with Debian's prometheus package,
# which tools/bootstrap.sh installs (Debian 12: promtool 2.42; the lab's Debian 13: 2.53).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if ! command -v promtool >/dev/null; then
  echo "alert_rules: promtool not found: install Debian's prometheus package (tools/bootstrap.sh does)"
  exit 1
fi
promtool --version 2>&1 | head -n 1
rules=(monitoring/prometheus/*.yml)
tests=(tests/monitoring/*.test.yml)
promtool check rules "${rules[@]}"
promtool test rules "${tests[@]}"
python - "${#rules[@]}" "${rules[@]}" "${tests[@]}" <<'PY'
import sys

import yaml

count = int(sys.argv[1])
alerts = [rule['alert'] for path in sys.argv[2:2 + count] for group in yaml.safe_load(open(path))['groups']
          for rule in group['rules'] if 'alert' in rule]
fire, quiet, expected = {}, {}, 0
for path in sys.argv[2 + count:]:
    for test in yaml.safe_load(open(path))['tests']:
        for case in test.get('alert_rule_test', []):
            seen = fire if case.get('exp_alerts') else quiet
            seen[case['alertname']] = seen.get(case['alertname'], 0) + 1
            expected += len(case.get('exp_alerts') or [])
problems = ['%s: no test case where it %s' % (name, what) for name in alerts
            for what, seen in (('fires', fire), ('stays quiet', quiet)) if name not in seen]
problems += ['%s: tested, but no such alert' % name for name in sorted(set(fire) | set(quiet)) if name not in alerts]
if problems:
    sys.exit('\n'.join(problems))
print('alert_rules: %d alerts; %d cases that fire (%d alerts expected), %d cases that stay quiet'
      % (len(alerts), sum(fire.values()), expected, sum(quiet.values())))
PY
# The routing example (monitoring/alertmanager/): Alertmanager loads it, and every severity the rules use
# reaches its receiver - critical the on-call page, warning a ticket, info none. amtool comes with Debian's
# prometheus-alertmanager, which tools/bootstrap.sh installs.
if ! command -v amtool >/dev/null; then
  echo "alert_rules: amtool not found: install Debian's prometheus-alertmanager (tools/bootstrap.sh does)"
  exit 1
fi
routing=monitoring/alertmanager/inferops-routing.yml
amtool check-config "$routing" >/dev/null
severities=$(python - "${rules[@]}" <<'PY'
import sys

import yaml

print(' '.join(sorted({rule['labels']['severity'] for path in sys.argv[1:] for group in yaml.safe_load(open(path))['groups']
                       for rule in group['rules'] if 'alert' in rule})))
PY
)
declare -A receiver=([critical]=oncall [warning]=tickets [info]=null)
for severity in $severities; do
  [[ -n ${receiver[$severity]:-} ]] || { echo "alert_rules: severity $severity has no receiver in this check"; exit 1; }
  amtool config routes test --config.file="$routing" --verify.receivers="${receiver[$severity]}" \
    severity="$severity" alertname=InferopsExample node=node1 2>/dev/null >/dev/null ||
    { echo "alert_rules: severity=$severity does not route to ${receiver[$severity]} in $routing"; exit 1; }
done
echo "alert_rules: $routing routes severities ($severities) to ${receiver[critical]}, ${receiver[warning]}, ${receiver[info]}"
