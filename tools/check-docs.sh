#!/usr/bin/env bash
# The collection's documentation site, built as antsibull-docs builds a collection's docs
# (docs/release.md):
#  1. `antsibull-docs lint-collection-docs --plugin-docs`: every module's, plugin's and role's
#     documentation loads, its markup is valid and its references to this collection
#     (M(), P(), O(), RV()) point at something that exists;
#  2. the HTML site: `antsibull-docs collection` writes the RST, sphinx-build (the Ansible
#     theme, tools/docsite/) builds it. Every warning fails the stage except the references to
#     the Ansible docsite and to other collections (ansible.builtin, community.docker, ...),
#     which resolve through intersphinx inventories that CI cannot download; a page per
#     module, filter and role must come out;
#  3. the guides, docs/*.md, are pages of the same site (MyST, tools/docsite/conf.py): a page per
#     guide must come out, listed on the start page. A Markdown link to a page or file that does
#     not exist is a warning and fails the stage, as does a code fence left open
#     (tools/docsite/guide_links.py).
# Usage: tools/check-docs.sh [--out DIR]   (--out: copy the built HTML site to DIR)
set -euo pipefail
out=
[[ ${1:-} == --out ]] && out=$(realpath -m "$2")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d /tmp/inferops-docs.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# antsibull-docs runs ansible-doc, which finds the collection through this path only
# (the checkout's own ansible.cfg is not read from $scratch).
mkdir -p "$scratch/collections/ansible_collections/inferops"
ln -s "$root" "$scratch/collections/ansible_collections/inferops/node"
export ANSIBLE_COLLECTIONS_PATH="$scratch/collections"
unset ANSIBLE_CONFIG
cd "$scratch"

start=$SECONDS
# --skip-rstcheck: the same RST is built by sphinx below, where an RST error is a warning that fails
# (rstcheck took 30 of the 53 s).
antsibull-docs lint-collection-docs --plugin-docs --skip-rstcheck "$scratch/collections/ansible_collections/inferops/node"
echo "docs: antsibull-docs lint-collection-docs --plugin-docs: no errors ($((SECONDS - start)) s)"

start=$SECONDS
mkdir -m 0700 rst  # antsibull-docs wants a directory only its owner can write to
antsibull-docs --config-file "$root/tools/docsite/antsibull-docs.cfg" collection \
  --use-current --dest-dir rst inferops.node
cp "$root/tools/docsite/index.rst" rst/
# The guides, where the repository has them: docs/<name>.md is the page docs/<name>.html, and a
# link between guides or to a repository file resolves as on GitHub (tools/docsite/guide_links.py).
cp -r "$root/docs" rst/docs
sphinx-build -M html rst build -q -c "$root/tools/docsite" --keep-going -w warnings.txt
# What stays unresolved without the Ansible docsite's inventories: its own pages, and the
# plugins of other collections (ansible_collections.<namespace>.<name>.*), never this one's.
outside="undefined label: '(common_return_values|action_plugins|ansible_configuration_settings|ansible_collections\.[a-z0-9_]+\.[a-z0-9_]+\.[^']*)' \[ref\.ref\]$"
unexpected=$( { grep -vE "$outside" warnings.txt; grep -E "undefined label: 'ansible_collections\.inferops\.node\." warnings.txt; } || true)
if [[ -n $unexpected ]]; then
  echo "docs: sphinx-build warnings (only references outside the collection may stay unresolved):"
  echo "$unexpected"
  exit 1
fi
status=0
for file in "$root"/plugins/modules/*.py "$root"/plugins/lookup/*.py "$root"/plugins/filter/*.yml \
  "$root"/roles/*/meta/argument_specs.yml; do
  case $file in
    */modules/*) page="$(basename "$file" .py)_module.html" ;;
    */lookup/*) page="$(basename "$file" .py)_lookup.html" ;;
    */filter/*) page="$(basename "$file" .yml)_filter.html" ;;
    *) page="$(basename "$(dirname "$(dirname "$file")")")_role.html" ;;
  esac
  [[ $page == __init___module.html ]] && continue
  [[ -s build/html/collections/inferops/node/$page ]] || { echo "docs: no page $page for $file"; status=1; }
done
# A page per guide, and the start page's Guides list links to it.
for file in "$root"/docs/*.md; do
  page="docs/$(basename "$file" .md).html"
  [[ -s build/html/$page ]] || { echo "docs: no page $page for docs/${file##*/}"; status=1; continue; }
  grep -q "href=\"$page\"" build/html/index.html || { echo "docs: the start page does not list $page"; status=1; }
done
echo "docs: site built, $(find build/html/collections/inferops/node -name '*.html' | wc -l) plugin and role pages," \
  "$(find build/html/docs -name '*.html' | wc -l) guides," \
  "$(grep -c . warnings.txt || true) warnings on references outside the collection ($((SECONDS - start)) s)"
if [[ -n $out ]]; then
  mkdir -p "$out" && cp -r build/html/. "$out/" && echo "docs: the site is in $out (index.html)"
fi
exit "$status"
