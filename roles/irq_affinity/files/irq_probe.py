# irq_affinity probe: python3 -c <this> '<request json>'; read-only, prints one JSON document.
# Request: {"rules": [...], "require_match": bool, "banned": cpulist or null, "files": [path],
#           "units": [name], "dirs": [path]}
# Checks the rules the way the irq_pin module will (selectors compile, CPU lists parse and are
# online, which IRQs each rule matches - first match wins) and reports file and unit states.
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def cpulist(value):
    if isinstance(value, bool):
        raise ValueError('not a CPU list')
    if isinstance(value, int):
        return [value]
    if isinstance(value, list):
        return sorted(set(cpulist(v)[0] if not isinstance(v, int) or isinstance(v, bool) else v for v in value))
    text = str(value).strip()
    if not re.match(r'^\d+(-\d+)?(,\d+(-\d+)?)*$', text):
        raise ValueError('not a CPU list')
    cpus = set()
    for part in text.split(','):
        low, sep, high = part.partition('-')
        if sep and int(high) < int(low):
            raise ValueError('range %s is reversed' % part)
        # The kernel's NR_CPUS maximum (8192), as in module_utils/cpulist.py: a typo such
        # as 0-100000000 must not build a huge set.
        if int(high if sep else low) >= 8192:
            raise ValueError('CPU %s is beyond the supported maximum of 8192 CPUs' % (high if sep else low))
        cpus.update(range(int(low), int(high) + 1) if sep else [int(low)])
    return sorted(cpus)


def compact(cpus):
    """[0, 1, 2, 5] -> '0-2,5' (kernel cpulist form, for messages)."""
    runs = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ','.join('%d-%d' % (a, b) if a != b else '%d' % a for a, b in runs)


request = json.loads(sys.argv[1])
online = cpulist(read('/sys/devices/system/cpu/online') or '0')
names = {}
lines = (read('/proc/interrupts') or '').splitlines()
for line in lines[1:]:
    match = re.match(r'^\s*(\d+):', line)
    if match:
        irq = int(match.group(1))
        actions = read('/sys/kernel/irq/%d/actions' % irq)
        if actions is None:
            tokens, actions = line.split(), ''
            for pos, token in enumerate(tokens):
                if re.match(r'^\d*-[A-Za-z]\S*$', token):
                    actions = ' '.join(tokens[pos + 1:])
                    break
        names[irq] = actions.strip()

errors, rules = [], []
for index, rule in enumerate(request.get('rules') or []):
    entry = {'index': index, 'matched': [], 'names': [], 'cpus': None}
    rules.append(entry)
    try:
        entry['pattern'] = re.compile(rule.get('selector'))
    except (re.error, TypeError) as exc:
        errors.append('irq_affinity_rules[%d].selector = %s: not a valid regular expression: %s' % (
            index, json.dumps(rule.get('selector')), exc))
    value = rule.get('cpus')
    if value is not None and value != '':
        try:
            cpus = cpulist(value)
            offline = sorted(set(cpus) - set(online))
            if not cpus:
                errors.append('irq_affinity_rules[%d].cpus = %s: empty' % (index, json.dumps(value)))
            elif offline:
                errors.append('irq_affinity_rules[%d].cpus = %s: CPU(s) %s not online (online: %s)' % (
                    index, json.dumps(value), compact(offline), read('/sys/devices/system/cpu/online')))
            entry['cpus'] = cpus
        except (ValueError, TypeError) as exc:
            errors.append('irq_affinity_rules[%d].cpus = %s: %s (kernel cpulist syntax, e.g. 0-3,8)' % (
                index, json.dumps(value), exc))
for irq in sorted(names):
    for entry in rules:
        if 'pattern' in entry and entry['pattern'].search(names[irq]):
            entry['matched'].append(irq)
            entry['names'].append(names[irq])
            break
for entry in rules:
    if 'pattern' in entry and not entry['matched'] and request.get('require_match'):
        errors.append('irq_affinity_rules[%d].selector = %s matches no IRQ on this host (see /proc/interrupts; '
                      'irq_affinity_require_match: false allows it)' % (entry['index'], json.dumps(entry['pattern'].pattern)))
    entry.pop('pattern', None)

banned = request.get('banned')
if banned not in (None, ''):
    try:
        cpus = cpulist(banned)
        offline = sorted(set(cpus) - set(online))
        if offline:
            errors.append('irq_affinity_banned_cpus = %s: CPU(s) %s not online (online: %s)' % (
                json.dumps(banned), compact(offline), read('/sys/devices/system/cpu/online')))
        elif set(online) <= set(cpus):
            errors.append('irq_affinity_banned_cpus = %s: bans every online CPU; irqbalance needs at least one' % (
                json.dumps(banned)))
    except (ValueError, TypeError) as exc:
        errors.append('irq_affinity_banned_cpus = %s: %s (kernel cpulist syntax, e.g. 0-3,8)' % (json.dumps(banned), exc))

files = {}
for path in request.get('files', []):
    try:
        st = os.stat(path)
        with open(path, 'rb') as handle:
            digest = hashlib.sha1(handle.read()).hexdigest()
        files[path] = {'sha1': digest, 'mode': '%04o' % (st.st_mode & 0o7777), 'uid': st.st_uid, 'gid': st.st_gid}
    except OSError:
        files[path] = None

units = {}
if request.get('units'):
    proc = subprocess.run(['systemctl', 'show', '-p', 'Id', '-p', 'UnitFileState', '-p', 'ActiveState', '-p', 'LoadState']
                          + list(request['units']), stdout=subprocess.PIPE, universal_newlines=True, check=False)
    for unit, block in zip(request['units'], proc.stdout.strip().split('\n\n')):
        props = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        units[unit] = {'enabled': props.get('UnitFileState') or ('not-found' if props.get('LoadState') == 'not-found' else ''),
                       'active': props.get('ActiveState', ''), 'load': props.get('LoadState', '')}

print(json.dumps({'online': online, 'rules': rules, 'errors': errors, 'files': files, 'units': units,
                  'dirs': dict((d, os.path.isdir(d)) for d in request.get('dirs', [])),
                  'irqbalance': shutil.which('irqbalance')}))
