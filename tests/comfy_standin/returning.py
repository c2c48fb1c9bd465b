"""A returning user's data directory for the browser suite (`e2e_harness.py --comfy-frontend
VERSION --returning-user`): what the stand-in's user folder and the assistant's store hold after
earlier sessions of an older version of this extension, which bound a thread to its workflow
tab's key as the frontend names it —

- a saved workflow, `portrait.json` (EmptyImage → PreviewImage: it runs without models), and a
  thread bound to its path, which names the same workflow now (`portrait.json`);
- threads bound to temporary tabs' names, which ComfyUI gives again to new tabs
  (`Unsaved Workflow.json`, `Unsaved Workflow (2).json`), each about a graph long gone.

The browser's side (the tabs the frontend restores, its localStorage) comes from an earlier
session in the same browser profile: ui/e2e/support.mjs `previousSession`; its thread is then
bound as a version before thread keys bound it, to the tab's workflow id
(`unsaved:<id>`, `bindAsEarlierVersion`), which the panel moves to the tab's thread key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.service import AssistantService, ServiceOptions

PORTRAIT_ID = "5d7f1c2e-3b4a-4c6d-8e9f-0a1b2c3d4e5f"
PORTRAIT: dict[str, Any] = {
    "id": PORTRAIT_ID,
    "revision": 0,
    "last_node_id": 2,
    "last_link_id": 1,
    "nodes": [
        {
            "id": 1,
            "type": "EmptyImage",
            "pos": [100, 100],
            "size": [315, 130],
            "flags": {},
            "order": 0,
            "mode": 0,
            "inputs": [],
            "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}],
            "properties": {"Node name for S&R": "EmptyImage"},
            "widgets_values": [512, 768, 1, 0],
        },
        {
            "id": 2,
            "type": "PreviewImage",
            "pos": [500, 100],
            "size": [210, 246],
            "flags": {},
            "order": 1,
            "mode": 0,
            "inputs": [{"name": "images", "type": "IMAGE", "link": 1}],
            "outputs": [],
            "properties": {"Node name for S&R": "PreviewImage"},
            "widgets_values": [],
        },
    ],
    "links": [[1, 1, 0, 2, 0, "IMAGE"]],
    "groups": [],
    "config": {},
    "extra": {"ds": {"scale": 1, "offset": [0, 0]}},
    "version": 0.4,
}
SAVED_WORKFLOWS: dict[str, dict[str, Any]] = {"portrait.json": PORTRAIT}


@dataclass(frozen=True)
class EarlierThread:
    id: str
    workflow: str
    question: str
    answer: str

    def messages(self) -> list[Any]:
        return [
            {
                "id": f"{self.id}_q",
                "role": "user",
                "parts": [{"type": "text", "text": self.question}],
            },
            {
                "id": f"{self.id}_a",
                "role": "assistant",
                "parts": [{"type": "text", "text": self.answer}],
            },
        ]


EARLIER_THREADS: tuple[EarlierThread, ...] = (
    EarlierThread(
        "th_earlier_fox",
        "Unsaved Workflow.json",
        "Make the fox graph sharper",
        "Raised the fox graph's steps to 40.",
    ),
    EarlierThread(
        "th_earlier_lighthouse",
        "Unsaved Workflow (2).json",
        "Why is the lighthouse blurry?",
        "The lighthouse graph decodes at 256 pixels.",
    ),
    EarlierThread(
        "th_earlier_portrait",
        "portrait.json",
        "What does the portrait workflow do?",
        "It makes an empty 512×768 image and previews it.",
    ),
)


def user_folder(data_dir: Path) -> Path:
    """The stand-in's user folder (ComfyUI's `user/default`) inside a data directory."""
    return data_dir / "comfy-user" / "default"


async def seed_returning_user(options: ServiceOptions) -> None:
    """Write the saved workflows and the earlier threads into `options.data_dir`."""
    workflows = user_folder(options.data_dir) / "workflows"
    workflows.mkdir(parents=True, exist_ok=True)
    for name, workflow in SAVED_WORKFLOWS.items():
        (workflows / name).write_text(json.dumps(workflow, indent=2), encoding="utf-8")
    service = AssistantService(options)
    try:
        threads = await service.threads()
        for thread in EARLIER_THREADS:
            await threads.sync(thread.id, thread.messages(), workflow=thread.workflow)
    finally:
        await service.close()
