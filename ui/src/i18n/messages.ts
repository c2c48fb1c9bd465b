// The panel's English text: every key the panel uses (a translation has the same keys; a plural
// message has the forms Intl.PluralRules names for its locale, `other` always). `{name}` is a
// parameter; numbers and dates in parameters are formatted for the locale.

export type PluralMessage = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };
export type Message = string | PluralMessage;

export const en = {
  // the header (Panel.tsx)
  "header.newChat": "New chat",
  "header.showThreads": "Show the threads",
  "header.hideThreads": "Hide the threads",
  "header.threads": "Threads",
  "header.settings": "Settings",
  "header.newThread": "New thread",
  "header.openSettings": "Open the settings",
  "header.backToChat": "Back to the chat",
  "extension.tab": "Assistant",
  "extension.toggleCommand": "Assistant: show or hide the chat",

  // the header's branches (Branches.tsx)
  "branches.label": "Branches ({count})",
  "branches.title": "Branches: what rewinds set aside, to return to",
  "branches.count": { one: "{count} branch", other: "{count} branches" },
  "branches.menu": "Branches",
  "branches.returnTitle": { one: "Return to branch {number}: the {count} message set aside", other: "Return to branch {number}: the {count} messages set aside" },
  "branches.outOfReach": "It followed a message that is itself set aside now: return to the branch that holds that message first.",
  "branches.returnTo": "Return to branch {number}",
  "branches.messages": { one: "{count} message", other: "{count} messages" },

  // the thread list (ThreadList.tsx)
  "threads.noWorkflow": "no workflow",
  "threads.deleteTitle": "Delete this thread?",
  "threads.deleteMessage": "“{title}” and its messages will be deleted from the server.",
  "threads.titleInput": "Thread title",
  "threads.answering": "answering",
  "threads.unbound": "Bound to no workflow",
  "threads.rename": "Rename “{title}”",
  "threads.renameShort": "Rename",
  "threads.delete": "Delete “{title}”",
  "threads.deleteShort": "Delete",
  "threads.thisWorkflow": "This workflow",
  "threads.thisWorkflowHeading": "This workflow · {name}",
  "threads.none": "No threads yet: a message starts one.",
  "threads.others": "Other threads",
  "threads.list": "Threads",
  "threads.new": "New thread",
  "threads.newButton": "+ New thread",
  "threads.loadError": "The threads could not be loaded.",
  "threads.loading": "Loading…",
  "threads.loadMore": "Load more threads",
  "threads.more": "more…",

  // a thread's workflow menu (WorkflowMenu.tsx), a run's files (RunOutputs.tsx)
  "workflowMenu.moveFailed": "The thread could not be moved",
  "workflowMenu.moveHere": "Move to this workflow",
  "workflowMenu.unbind": "Unbind from its workflow",
  "workflowMenu.label": "Workflow of “{title}”",
  "workflowMenu.title": "Workflow",
  "runOutputs.more": "+{count} more",
  "runOutputs.label": { one: "What the run made: {count} file", other: "What the run made: {count} files" },

  // the composer (Composer.tsx, its attach button in Attachments.tsx)
  "composer.placeholder": "Ask about your workflow — / for commands",
  "composer.message": "Message",
  "composer.commands": "Commands",
  "composer.stopAnswer": "Stop the answer",
  "composer.stop": "Stop",
  "composer.send": "Send",
  "composer.sendEnter": "Send (Enter)",
  "composer.attaching": "Attaching…",
  "composer.removeRefused": "Remove the file that could not be attached",
  "composer.attach": "Attach files",
  "composer.attachTitle": "Attach images, workflows or text files",

  // the chat around the messages (Chat.tsx)
  "chat.welcome": "Ask about your workflow: build it, fix it, explain it, run it.",
  "chat.welcomeHelp": "Type {slash} for commands — {skill} follows a skill, {help} lists the rest. The model and server are set in {settings}.",
  "chat.settingsLink": "Settings",
  "chat.answerFailed": "The answer failed.",
  "chat.stepLimit": {
    one: "Stopped after {count} step (the limit per message, in Settings). Send “continue” to go on.",
    other: "Stopped after {count} steps (the limit per message, in Settings). Send “continue” to go on.",
  },
  "chat.waitingForYou": "Waiting for your answer above…",
  "chat.runningTools": "Running tools in the panel…",

  // a message (Messages.tsx)
  "message.codeText": "text",
  "message.copyCode": "Copy the code",
  "message.copy": "copy",
  "message.copied": "copied",
  "message.thinking": "Thinking…",
  "message.reasoning": "Reasoning",
  "message.copyAnswer": "Copy the answer",
  "message.answerAgain": "Answer again",
  "message.retry": "retry",
  "message.runNote": "How a run ended (added by the panel)",
  "message.editNote": "What you changed in the workflow by hand (added by the panel)",

  // a tool call's card (Messages.tsx ToolCard)
  "tool.summary": "Tool {name}: {state}",
  "tool.state.running": "running",
  "tool.state.done": "done",
  "tool.state.failed": "failed",
  "tool.state.cancelled": "cancelled",
  "tool.state.denied": "denied by you",
  "tool.arguments": "Arguments",
  "tool.error": "Error",
  "tool.result": "Result",
  "tool.running": "Running…",
  "tool.progress": "Running: {parts}",
  "tool.progress.node": "node {node}",
  "tool.progress.step": "step {step}/{steps}",
  "tool.progress.cached": { one: "{count} cached", other: "{count} cached" },
  "tool.progress.ran": { one: "{count} run", other: "{count} run" },
  "tool.stopWaiting": "Stop waiting",
  "tool.interrupt": "Interrupt the run",
  "tool.serverAsks": "{name} asks for your approval.",

  // the approval card (ApprovalCard.tsx)
  "approval.label": "The assistant asks before it acts",
  "approval.more": { one: "and {count} more", other: "and {count} more" },
  "approval.cost": "Cost: {cost}",
  "approval.always": "Allow graph edits in this thread without asking",
  "approval.allow": "Allow",
  "approval.deny": "Deny",

  // ── the context gauge, Settings, Egress, Notices, Projects (gauge.ts, Settings.tsx, …) ──

  // ── rewind, citations, delegated tasks, attachments, commands, the panel's own errors ──

  // ── errors the server sends with a code and parameters (error.*) ──
} satisfies Record<string, Message>;

export type MessageKey = keyof typeof en;
