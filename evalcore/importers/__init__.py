"""Reading project folders and other formats into typed records, validating everything before writing."""

from evalcore.importers.project import ProjectBundle, import_project, load_project

__all__ = ["ProjectBundle", "import_project", "load_project"]
