#!/usr/bin/env python3
"""Sanity checks for the lineside fixture: runs eval/helpcentre/check.py on this folder.

eval/helpcentre/check.py only reads kb/<tenant>/*.md pages with YAML front matter. About a
third of this fixture's pages are help-centre HTML exports (kb/<tenant>/*.html), so this
wrapper copies the fixture into a temporary folder, turns each HTML page into a .md page
(front matter from <title> and the <meta> tags, body = the page's visible text with the tags
stripped) and runs the generic checks on that copy. Nothing in this folder is changed.
"""

import html
import html.parser
import os
import re
import runpy
import shutil
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCK = {
    "p",
    "li",
    "tr",
    "td",
    "th",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "h4",
    "summary",
    "details",
    "div",
    "section",
    "article",
    "main",
    "nav",
    "header",
    "footer",
    "br",
    "table",
    "ol",
    "ul",
    "dl",
}


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.meta, self.title, self.parts, self.skip, self.in_title = {}, "", [], 0, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "meta" and "name" in a:
            self.meta[a["name"]] = a.get("content", "")
        elif tag == "title":
            self.in_title = True
        elif tag in ("head", "script", "style"):
            self.skip += 1
        if tag in BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        elif tag in ("head", "script", "style"):
            self.skip -= 1
        if tag in BLOCK:
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" ")

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        elif not self.skip:
            self.parts.append(data)


def html_to_md(text):
    """Return (front matter dict, plain text body) for a help-centre HTML export."""
    p = _Page()
    p.feed(text)
    meta = {"title": html.unescape(p.title).strip()}
    for k in ("document_id", "url", "version", "tenant", "status"):
        if k in p.meta:
            meta[k] = p.meta[k]
    if "groups" in p.meta:
        meta["groups"] = [g.strip() for g in p.meta["groups"].split(",") if g.strip()]
    body = re.sub(r"[ \t]*\n\s*", "\n", "".join(p.parts)).strip() + "\n"
    return meta, body


def main():
    tmp = tempfile.mkdtemp(prefix="lineside-check-")
    try:
        for name in ("api-keys.yaml", "qa-tuning.yaml", "qa-heldout.yaml"):
            shutil.copy(os.path.join(HERE, name), tmp)
        kb = os.path.join(HERE, "kb")
        for tenant in sorted(os.listdir(kb)):
            os.makedirs(os.path.join(tmp, "kb", tenant))
            for fn in sorted(os.listdir(os.path.join(kb, tenant))):
                src = os.path.join(kb, tenant, fn)
                stem, ext = os.path.splitext(fn)
                if ext == ".md":
                    shutil.copy(src, os.path.join(tmp, "kb", tenant, fn))
                elif ext == ".html":
                    with open(src, encoding="utf-8") as page:
                        meta, body = html_to_md(page.read())
                    with open(
                        os.path.join(tmp, "kb", tenant, stem + ".md"), "w", encoding="utf-8"
                    ) as f:
                        f.write(
                            "---\n"
                            + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)
                            + "---\n\n"
                            + body
                        )
        sys.argv = [sys.argv[0], tmp]
        runpy.run_path(os.path.join(HERE, "..", "helpcentre", "check.py"), run_name="__main__")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
