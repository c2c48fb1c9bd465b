"""What the assistant can look up on this machine: ComfyUI's installed nodes and models (the
environment index), its workflow templates, skills as files, and the shipped system context.

May import: base.
"""

from .context_files import (
    SYSTEM_CONTEXT_DIR,
    SystemContext,
    load_context,
    load_system_context,
    skill_names_line,
    skills_index,
)
from .environment import (
    COMFYUI_SOURCE,
    Environment,
    EnvironmentService,
    Input,
    UnknownModelCategory,
    from_object_info,
)
from .skills import (
    SYSTEM_SKILLS_DIR,
    Skill,
    SkillDirectory,
    SkillError,
    check_slug,
    closest,
    list_skills,
    user_skills_dir,
)
from .templates import Template, TemplateLibrary, installed_library

__all__ = [
    "COMFYUI_SOURCE",
    "SYSTEM_CONTEXT_DIR",
    "SYSTEM_SKILLS_DIR",
    "Environment",
    "EnvironmentService",
    "Input",
    "Skill",
    "SkillDirectory",
    "SkillError",
    "SystemContext",
    "Template",
    "TemplateLibrary",
    "UnknownModelCategory",
    "check_slug",
    "closest",
    "from_object_info",
    "installed_library",
    "list_skills",
    "load_context",
    "load_system_context",
    "skill_names_line",
    "skills_index",
    "user_skills_dir",
]
