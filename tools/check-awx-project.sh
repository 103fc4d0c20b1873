#!/usr/bin/env bash
# A fresh clone used as an AWX project, with no bootstrap step (docs/awx.md). AWX clones the
# repository and runs a playbook of it with the execution environment's ansible-core and
# collections, and sets the job's collections path itself (ANSIBLE_COLLECTIONS_PATHS), which
# overrides the clone's ansible.cfg (whose ./collections would serve every playbook). inferops.node
# must resolve through the committed playbook-adjacent links collections/ (for site.yml) and
# playbooks/collections/ (for playbooks/*.yml), each ansible_collections/inferops/node -> the
# clone's root. Run with an empty environment but for ANSIBLE_COLLECTIONS_PATH (an empty
# directory), an empty home (no ~/.ansible collections), PATH without the venv; only the venv's ansible-core and the
# `ansible` bundle's collections (community.general, community.docker: what the EE installs
# from galaxy.yml's dependencies, or AWX from requirements.yml).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The ansible-playbook of the caller's PATH (tools/test.sh: the venv), by its full path.
playbook=$(command -v ansible-playbook)
scratch=$(mktemp -d /tmp/inferops-awx-project.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
project="$scratch/project"

# The committed tree, as AWX gets it (uncommitted changes are not in the clone).
git clone -q --no-hardlinks "$root" "$project"
[[ -z $(git -C "$root" status --porcelain) ]] ||
  echo "awx-project: the working tree has uncommitted changes: this checks the commit $(git -C "$root" rev-parse --short HEAD)"
for link in collections playbooks/collections; do
  [[ -L $project/$link/ansible_collections/inferops/node ]] ||
    { echo "awx-project: $link/ansible_collections/inferops/node is not a committed link"; exit 1; }
done
mkdir "$scratch/home" "$scratch/job-collections"
in_project() {  # command...: in the clone, with an empty environment and a collections path of AWX's
  (cd "$project" && env -i HOME="$scratch/home" PATH=/usr/bin:/bin LANG=C.UTF-8 \
    ANSIBLE_COLLECTIONS_PATH="$scratch/job-collections" "$@")
}
# Each playbook directory on its own: one ansible-playbook run with both would let either
# link serve both directories.
in_project "$playbook" --syntax-check site.yml
in_project "$playbook" --syntax-check "$project"/playbooks/*.yml
# A job's own playbook, next to the project's playbooks (AWX runs any playbook of the project).
cp "$root/tests/awx/project_check.yml" "$project/playbooks/"
mkdir "$project/playbooks/no-such-bin"
echo "awx-project: a job on localhost; its one failed task, check-jsonschema missing, is expected (rescued)"
in_project "$playbook" playbooks/project_check.yml
echo "awx-project: inferops.node resolves in a fresh clone (site.yml, playbooks/*.yml, a job run on localhost)"
