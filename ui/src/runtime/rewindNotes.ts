// What the model is told after the conversation moved without the graph: a conversation-only
// rewind, or a return to a branch. The thread's messages then describe a workflow the user's tab
// may no longer hold; the next user message carries one note that says so (ChatStore.sendMessage,
// beside the hand-edit and run notes), stored with that message so requests stay append-only.
// Each note says only what is known: whether the graph differs from the checkpoint of the answer
// rewound to (then it does), or that it was not changed by a branch return (then it may differ).

const NOTE_START = "[The conversation ";

/** After a conversation-only rewind to before an answer: `differs` whether the graph now is not
 * the graph from before that answer (null: unknown, its checkpoint could not be read). */
export function rewoundNote(differs: boolean | null): string | null {
  if (differs === false) return null; // (the graph is as it was at that point: nothing to tell)
  const how =
    differs === true
      ? "it differs from the workflow at this point of the conversation (changes made in the part set aside, or by hand since), and the messages above do not show those changes"
      : "it may differ from the workflow at this point of the conversation";
  return `${NOTE_START}was rewound to here; the workflow was not rewound with it: ${how}. Read it (getWorkflow) before relying on it.]`;
}

/** After a return to branch `number`: the graph was left as it was. */
export function branchNote(number: number): string {
  return (
    `${NOTE_START}returned to branch ${number}, an earlier line of this chat; the workflow was not changed by that: ` +
    "it is as the user's tab had it before the return, which may differ from what the messages above describe. Read it (getWorkflow) before relying on it.]"
  );
}

/** Whether a user message's text part is such a note (the panel shows it as its own). */
export function isRewindNote(text: string): boolean {
  return text.startsWith(NOTE_START) && / the workflow was not (rewound|changed)/.test(text.split("\n", 1)[0] ?? "");
}
