"""Files: what the user brings (attachments: images, workflows, text; projects with their pinned
documents) and what a run made (read from ComfyUI's output and temp folders only, looked at, and
the newest run's images drawn as one picture for a model that sees).

May import: base, tokens, store.
"""

from . import project_documents
from .attachment_files import (
    MAX_BYTES,
    FileReading,
    human_size,
    model_parts,
    read_file,
)
from .attachments import Attachment, Attachments, new_id
from .output_checks import look_output
from .projects import (
    MAX_DOCUMENT_BYTES,
    ProjectContext,
    Projects,
    check_name,
    check_text,
    check_title,
)
from .run_images import Shown, with_shown
from .run_outputs import (
    FolderOutputs,
    OutputRef,
    OutputSource,
    ref_of,
    standalone_outputs,
)
from .turn_files import TurnFiles, turn_files

__all__ = [
    "MAX_BYTES",
    "MAX_DOCUMENT_BYTES",
    "Attachment",
    "Attachments",
    "FileReading",
    "FolderOutputs",
    "OutputRef",
    "OutputSource",
    "ProjectContext",
    "Projects",
    "Shown",
    "TurnFiles",
    "check_name",
    "check_text",
    "check_title",
    "human_size",
    "look_output",
    "model_parts",
    "new_id",
    "project_documents",
    "read_file",
    "ref_of",
    "standalone_outputs",
    "turn_files",
    "with_shown",
]
