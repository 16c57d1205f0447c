#!/usr/bin/env python3
"""Sanity checks for the fernhill fixture: runs eval/helpcentre/check.py on this folder.

Extended from eval/lineside/check.py. eval/helpcentre/check.py only reads kb/<tenant>/*.md
pages with YAML front matter, but this fixture mixes four page formats:

- .md: Markdown with YAML front matter (copied as is);
- .html: help-centre HTML exports (front matter from <title> and the <meta> tags, body = the
  page's visible text with the tags stripped);
- .txt: plain-text policy documents with the same YAML front matter as the Markdown pages
  (copied as is, front matter kept);
- .pdf: PDF documents (body = the text pypdf extracts from each page, front matter from the
  sidecar <file>.pdf.meta.yaml).

This wrapper copies the fixture into a temporary folder, turns every page into a .md page
there and runs the generic checks on that copy. Before that it checks that every .md/.txt
front matter is valid YAML with the required keys, that every HTML page has tenant and groups
metas and every PDF a sidecar. Nothing in this folder is changed.
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
from pypdf import PdfReader

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
    "aside",
    "button",
    "caption",
    "label",
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


REQUIRED = ("title", "document_id", "url", "version", "tenant", "groups")


def pdf_to_md(path):
    """Return (front matter dict from the sidecar, text extracted by pypdf) for a PDF page."""
    with open(path + ".meta.yaml", encoding="utf-8") as f:
        meta = yaml.safe_load(f)
    reader = PdfReader(path)
    body = "\n".join((page.extract_text() or "") for page in reader.pages)
    return meta, re.sub(r"[ \t]*\n\s*", "\n", body).strip() + "\n"


def precheck(path, ext, problems):
    """Format checks that the generic check can't see once pages are converted."""
    if ext in (".md", ".txt"):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not text.startswith("---\n"):
            problems.append(f"{path}: no front matter")
            return
        try:
            meta = yaml.safe_load(text.split("---\n", 2)[1])
        except yaml.YAMLError as e:
            problems.append(f"{path}: front matter is not valid YAML ({e})")
            return
    elif ext == ".html":
        with open(path, encoding="utf-8") as f:
            p = _Page()
            p.feed(f.read())
        if not p.title.strip():
            problems.append(f"{path}: no <title>")
        for k in REQUIRED[1:]:
            if not p.meta.get(k):
                problems.append(f'{path}: no <meta name="{k}">')
        return
    elif ext == ".pdf":
        if not os.path.exists(path + ".meta.yaml"):
            problems.append(f"{path}: no sidecar {os.path.basename(path)}.meta.yaml")
            return
        meta, body = pdf_to_md(path)
        if len(body.split()) < 50:
            problems.append(f"{path}: pypdf extracts almost no text")
    else:
        return
    if not isinstance(meta, dict):
        problems.append(f"{path}: front matter is not a mapping")
        return
    for k in REQUIRED:
        if k not in meta:
            problems.append(f"{path}: front matter has no {k}")
    if not isinstance(meta.get("groups"), list):
        problems.append(f"{path}: groups is not a list")


def main(here=HERE):
    """Checks the fixture in folder ``here`` (eval/kestrel and eval/tidewater, in the
    same four formats, run these checks on theirs)."""
    problems = []
    kb = os.path.join(here, "kb")
    for tenant in sorted(os.listdir(kb)):
        for fn in sorted(os.listdir(os.path.join(kb, tenant))):
            precheck(os.path.join(kb, tenant, fn), os.path.splitext(fn)[1], problems)
            if not fn.endswith((".md", ".txt", ".html", ".pdf", ".pdf.meta.yaml")):
                problems.append(f"{tenant}/{fn}: unknown page format")
    for p in problems:
        sys.stderr.write(f"ERROR: {p}\n")
    if problems:
        sys.exit(1)
    tmp = tempfile.mkdtemp(prefix=f"{os.path.basename(here)}-check-")
    try:
        for name in ("api-keys.yaml", "qa-tuning.yaml", "qa-heldout.yaml"):
            shutil.copy(os.path.join(here, name), tmp)
        kb = os.path.join(here, "kb")
        for tenant in sorted(os.listdir(kb)):
            os.makedirs(os.path.join(tmp, "kb", tenant))
            for fn in sorted(os.listdir(os.path.join(kb, tenant))):
                src = os.path.join(kb, tenant, fn)
                stem, ext = os.path.splitext(fn)
                meta = None
                if ext in (".md", ".txt"):
                    shutil.copy(src, os.path.join(tmp, "kb", tenant, stem + ".md"))
                elif ext == ".html":
                    with open(src, encoding="utf-8") as page:
                        meta, body = html_to_md(page.read())
                elif ext == ".pdf":
                    meta, body = pdf_to_md(src)
                if meta is not None:
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
        runpy.run_path(os.path.join(here, "..", "helpcentre", "check.py"), run_name="__main__")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
