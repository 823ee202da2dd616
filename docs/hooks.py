"""MkDocs hook: the file-format page is generated from the models when the site is built."""

from sslab.cli.formats import formats_markdown

MARKER = "<!-- formats: generated at build time -->"


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "formats.md":
        if MARKER not in markdown:
            raise ValueError("docs/formats.md lost its marker: the formats would not be generated")
        return markdown.replace(MARKER, formats_markdown())
    return markdown
