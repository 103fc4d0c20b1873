# Sphinx configuration of the collection's documentation site (tools/check-docs.sh, docs/release.md).
# Started from `antsibull-docs sphinx-init --use-current inferops.node` (antsibull-docs 2.28.0).
# No intersphinx: CI cannot download the Ansible docsite's inventories, so references to
# ansible.builtin, other collections and the docsite's own pages stay unresolved there, and
# tools/check-docs.sh accepts exactly those warnings.
# The guides (docs/*.md) are Markdown pages of the same site: tools/check-docs.sh copies docs/ next to
# the RST antsibull-docs writes (rst/docs/, the repository's layout), MyST renders them and
# guide_links (next to this file) links what they name of the repository.

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

project = 'inferops.node'
copyright = 'inferops.node contributors'

title = 'inferops.node Collection Documentation'
html_short_title = 'inferops.node'

extensions = ['sphinx_antsibull_ext', 'myst_parser', 'guide_links']
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
# GitHub's anchors: [Tests](#tests), [benchmarks.md](benchmarks.md#model_sync) resolve as on GitHub.
myst_heading_anchors = 6

pygments_style = 'ansible'
highlight_language = 'YAML+Jinja'

html_theme = 'sphinx_ansible_theme'
html_show_sphinx = False
display_version = False
html_use_smartypants = True
html_use_modindex = False
html_use_index = False
html_copy_source = False

default_role = 'any'
nitpicky = True
