"""Inputs (the arrow "system card + documents + tools + procedures" in): project folders and zips read
into typed records, validated whole before anything is written."""

from evalcore.inputs.project import ProjectBundle, import_project, load_project

__all__ = ["ProjectBundle", "import_project", "load_project"]
