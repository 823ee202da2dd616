"""MkDocs hooks: pages generated from the code when the site is built, so they cannot drift from it.

- formats.md: its marker is replaced by every file format's fields (sslab.cli.formats);
- measurements.md: its markers by each experiment's measured wall time (its file's time_here) and by
  the notebook's index (its pages' dated entries, sslab.cli.docpages.notebook_index);
- starts.md: its marker by our module's parameters, from their declarations (sslab.cli.formats);
- results.md and index.md: Table 1's answer, plots and causes from the snapshot of a real report in
  docs/results/table1/ (sslab.cli.docresults); experiments.md: E7's paper values beside ours from it;
- experiments/<name>.md: one page per experiment file (sslab.cli.docpages), listed under
  "Experiments" after the overview;
- every page loads the offline search's worker shim from the site itself, not from unpkg.com
  (sslab.cli.docassets): the site works from disk without a network.
"""

from functools import cache

from pathlib import Path

from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

from sslab.cli.docassets import SHIM_IN_SITE, SHIM_URL_ASKED, search_shim
from sslab.cli.docpages import experiment_pages, notebook_index
from sslab.cli.docresults import e7_beside_paper, results_glance, results_page
from sslab.cli.formats import formats_markdown, module_params_markdown
from sslab.experiment.spec import experiment_times_table

#: Markers in a page and what replaces them when the site is built.
GENERATED = {"formats.md": [("<!-- formats: generated at build time -->", formats_markdown)],
             "experiments.md": [("<!-- e7 values: generated at build time -->", e7_beside_paper)],
             "measurements.md": [("<!-- experiment times: generated at build time -->", experiment_times_table),
                                 ("<!-- notebook index: generated at build time -->", notebook_index)],
             "starts.md": [("<!-- module parameters: generated at build time -->", module_params_markdown)],
             "results.md": [("<!-- table1 results: generated at build time -->", results_page)],
             "index.md": [("<!-- table1 at a glance: generated at build time -->", results_glance)]}


@cache
def _experiment_pages() -> dict[str, str]:
    return experiment_pages()


def on_config(config):
    for i, item in enumerate(config["nav"]):
        if isinstance(item, dict) and "Experiments" in item:
            config["nav"][i] = {"Experiments": [item["Experiments"], *_experiment_pages()]}
            return config
    raise ValueError("mkdocs.yml's nav has no Experiments entry for the experiment pages")


def on_files(files, config):
    for uri, text in _experiment_pages().items():
        files.append(File.generated(config, uri, content=text))
    return files


def on_page_markdown(markdown, page, config, files):
    for marker, make in GENERATED.get(page.file.src_uri, []):
        if marker not in markdown:
            raise ValueError(f"docs/{page.file.src_uri} lost its marker {marker}: its table would not be generated")
        markdown = markdown.replace(marker, make())
    return markdown


def on_post_page(output, page, config):
    return output.replace(f'src="{SHIM_URL_ASKED}"', f'src="{get_relative_url(SHIM_IN_SITE, page.url)}"')


def on_post_build(config):
    target = Path(config["site_dir"]) / SHIM_IN_SITE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(search_shim())


def on_post_template(output_content, template_name, config):
    # The site's root templates (404.html): the shim from the root's assets.
    return output_content.replace(f'src="{SHIM_URL_ASKED}"', f'src="{SHIM_IN_SITE}"')
