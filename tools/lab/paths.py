"""Where the lab keeps its image cache and its running guests."""
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECIPE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recipe")
PRESET_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "presets")


def cache_dir():
    """Image cache: outside git, survives clones on the same machine."""
    default = os.path.join(os.path.expanduser("~"), ".cache", "inferops-lab")
    return os.environ.get("INFEROPS_LAB_CACHE", default)


def run_dir(lab_name):
    """State of one running lab: disks, console logs, inventory."""
    base = os.environ.get("INFEROPS_LAB_RUN", os.path.join(REPO_ROOT, ".cache", "lab"))
    return os.path.join(base, lab_name)
