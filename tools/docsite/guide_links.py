# Sphinx extension of the collection's documentation site (tools/docsite/conf.py): what the guides
# (docs/*.md, rendered by MyST as rst/docs/<name>) name of the repository becomes a link.
#  1. A Markdown link to a repository file that is no page of the site ([the role's
#     README](../roles/model_sync/README.md), [README](../README.md)) points at that file in the
#     repository (galaxy.yml's `repository`, branch main), as it works on GitHub. A link to a file
#     the repository does not have is left to MyST, which warns (myst.xref_missing): the stage fails.
#  2. A code span that names a guide and nothing else (`docs/rollout.md`), in a guide or in a
#     plugin's documentation, links to the guide's page.
# And it warns (the stage fails) about a guide's code fence that is never closed: CommonMark, and so
# MyST, ends it silently with the document, which then shows the rest of the guide as code.
import os
import re

import yaml
from docutils import nodes
from markdown_it import MarkdownIt
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
GUIDE = re.compile(r'docs/([a-z0-9_]+)\.md')
SCHEME = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')


def _blob_base():
    with open(os.path.join(ROOT, 'galaxy.yml'), encoding='utf-8') as f:
        return yaml.safe_load(f)['repository'].rstrip('/') + '/blob/main/'


class GuideLinks(SphinxPostTransform):
    default_priority = 8  # before MyST's resolver (9), which warns about what stays unresolved

    def run(self, **kwargs):
        docname = self.env.docname
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get('reftype') != 'myst' or node.get('refdomain') is not None:
                continue  # MyST resolved it to a page (refdomain 'doc'), or it is not MyST's
            target = node['reftarget']
            if not target or target.startswith('#') or SCHEME.match(target):
                continue
            path, anchor = (target.split('#', 1) + [''])[:2]
            repo_path = os.path.normpath(os.path.join(os.path.dirname(docname), path))
            if repo_path.startswith('..') or not os.path.exists(os.path.join(ROOT, repo_path)):
                continue
            uri = self.app.config.guide_links_blob_base + repo_path + ('#' + anchor if anchor else '')
            ref = nodes.reference('', '', internal=False, refuri=uri)
            inner = node.children[0].deepcopy() if node.children else nodes.Text(target)
            if isinstance(inner, nodes.inline) and not inner.children:
                inner = nodes.literal(target, target)
            ref += inner
            node.replace_self(ref)
        for literal in list(self.document.findall(nodes.literal)):
            match = GUIDE.fullmatch(literal.astext())
            if not match or isinstance(literal.parent, (nodes.reference, addnodes.pending_xref)):
                continue
            guide = 'docs/' + match.group(1)
            if guide not in self.env.all_docs or guide == docname:
                continue
            uri = self.app.builder.get_relative_uri(docname, guide)
            ref = nodes.reference('', '', internal=True, refuri=uri)
            literal.replace_self(ref)
            ref += literal


def unclosed_fences(app, docname, source):
    if not app.env.doc2path(docname).suffix == '.md':
        return
    lines = source[0].splitlines()
    for token in MarkdownIt('commonmark').parse(source[0]):
        if token.type != 'fence' or not token.map:
            continue
        last = lines[token.map[1] - 1].strip() if token.map[1] - 1 > token.map[0] else ''
        if not (last.startswith(token.markup) and not last.strip(token.markup[0])):
            LOGGER.warning('code fence %s opened here is not closed (it runs to line %d)',
                           token.markup, token.map[1], location=(docname, token.map[0] + 1))


def setup(app):
    app.connect('source-read', unclosed_fences)
    app.add_config_value('guide_links_blob_base', _blob_base(), 'env')
    app.add_post_transform(GuideLinks)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
