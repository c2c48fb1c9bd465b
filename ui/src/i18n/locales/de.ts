// Deutsch. ComfyUI's own de words where it has them: Workflow, Node, Einstellungen, Senden, Stopp,
// Neuer Chat, Löschen, Umbenennen, Zweig, Graph, Ausführen, Unterbrechen, Tool, Argumente.
// Formal "Sie", infinitive buttons, „…“ quotes.
import type { Translation } from "..";

const limit = "(das Limit pro Nachricht, einstellbar in den Einstellungen). Senden Sie „weiter“, um fortzufahren.";

const table: Translation = {
  "header.newChat": "Neuer Chat",
  "header.showThreads": "Chats anzeigen",
  "header.hideThreads": "Chats ausblenden",
  "header.threads": "Chats",
  "header.settings": "Einstellungen",
  "header.newThread": "Neuer Chat",
  "header.openSettings": "Einstellungen öffnen",
  "header.backToChat": "Zurück zum Chat",
  "extension.tab": "Assistent",
  "extension.toggleCommand": "Assistent: Chat ein-/ausblenden",

  "branches.label": "Zweige ({count})",
  "branches.title": "Zweige: beim Zurückspulen Beiseitegelegtes, zu dem Sie zurückkehren können",
  "branches.count": { one: "{count} Zweig", other: "{count} Zweige" },
  "branches.menu": "Zweige",
  "branches.returnTitle": {
    one: "Zu Zweig {number} zurückkehren: {count} beiseitegelegte Nachricht",
    other: "Zu Zweig {number} zurückkehren: {count} beiseitegelegte Nachrichten",
  },
  "branches.outOfReach": "Dieser Zweig folgte auf eine Nachricht, die jetzt selbst beiseitegelegt ist: Kehren Sie zuerst zu dem Zweig zurück, der diese Nachricht enthält.",
  "branches.returnTo": "Zu Zweig {number} zurückkehren",
  "branches.messages": { one: "{count} Nachricht", other: "{count} Nachrichten" },

  "threads.noWorkflow": "kein Workflow",
  "threads.deleteTitle": "Diesen Chat löschen?",
  "threads.deleteMessage": "„{title}“ und alle zugehörigen Nachrichten werden vom Server gelöscht.",
  "threads.titleInput": "Chat-Titel",
  "threads.answering": "antwortet",
  "threads.unbound": "An keinen Workflow gebunden",
  "threads.rename": "„{title}“ umbenennen",
  "threads.renameShort": "Umbenennen",
  "threads.delete": "„{title}“ löschen",
  "threads.deleteShort": "Löschen",
  "threads.thisWorkflow": "Dieser Workflow",
  "threads.thisWorkflowHeading": "Dieser Workflow · {name}",
  "threads.none": "Noch keine Chats: Senden Sie eine Nachricht, um einen zu beginnen.",
  "threads.others": "Andere Chats",
  "threads.list": "Chats",
  "threads.new": "Neuer Chat",
  "threads.newButton": "+ Neuer Chat",
  "threads.loadError": "Die Chats konnten nicht geladen werden.",
  "threads.loading": "Wird geladen…",
  "threads.loadMore": "Weitere Chats laden",
  "threads.more": "mehr…",

  "workflowMenu.moveFailed": "Der Chat konnte nicht verschoben werden",
  "workflowMenu.moveHere": "In diesen Workflow verschieben",
  "workflowMenu.unbind": "Vom Workflow lösen",
  "workflowMenu.label": "Workflow von „{title}“",
  "workflowMenu.title": "Workflow",
  "runOutputs.more": "+{count} weitere",
  "runOutputs.label": { one: "Von der Ausführung erzeugt: {count} Datei", other: "Von der Ausführung erzeugt: {count} Dateien" },

  "composer.placeholder": "Fragen Sie etwas zu Ihrem Workflow – / für Befehle",
  "composer.message": "Nachricht",
  "composer.commands": "Befehle",
  "composer.stopAnswer": "Antwort stoppen",
  "composer.stop": "Stopp",
  "composer.send": "Senden",
  "composer.sendEnter": "Senden (Enter)",
  "composer.attaching": "Wird angehängt…",
  "composer.removeRefused": "Entfernen Sie die Datei, die nicht angehängt werden konnte",
  "composer.attach": "Dateien anhängen",
  "composer.attachTitle": "Bilder, Workflows oder Textdateien anhängen",

  "chat.welcome": "Fragen Sie mich etwas zu Ihrem Workflow: erstellen, reparieren, erklären, ausführen.",
  "chat.welcomeHelp": "Geben Sie {slash} für Befehle ein – {skill} folgt einem Skill, {help} listet die übrigen auf. Modell und Server legen Sie in den {settings} fest.",
  "chat.settingsLink": "Einstellungen",
  "chat.answerFailed": "Die Antwort ist fehlgeschlagen.",
  "chat.stepLimit": {
    one: `Nach {count} Schritt angehalten ${limit}`,
    other: `Nach {count} Schritten angehalten ${limit}`,
  },
  "chat.waitingForYou": "Wartet auf Ihre Antwort oben…",
  "chat.runningTools": "Tools werden im Panel ausgeführt…",

  "message.codeText": "Text",
  "message.copyCode": "Code kopieren",
  "message.copy": "kopieren",
  "message.copied": "kopiert",
  "message.thinking": "Denkt nach…",
  "message.reasoning": "Gedankengang",
  "message.copyAnswer": "Antwort kopieren",
  "message.answerAgain": "Erneut antworten",
  "message.retry": "wiederholen",
  "message.runNote": "Wie eine Ausführung endete (vom Panel hinzugefügt)",
  "message.editNote": "Was Sie von Hand am Workflow geändert haben (vom Panel hinzugefügt)",

  "tool.summary": "Tool {name}: {state}",
  "tool.state.running": "wird ausgeführt",
  "tool.state.done": "fertig",
  "tool.state.failed": "fehlgeschlagen",
  "tool.state.cancelled": "abgebrochen",
  "tool.state.denied": "von Ihnen abgelehnt",
  "tool.arguments": "Argumente",
  "tool.error": "Fehler",
  "tool.result": "Ergebnis",
  "tool.running": "Wird ausgeführt…",
  "tool.progress": "Wird ausgeführt: {parts}",
  "tool.progress.node": "Node {node}",
  "tool.progress.step": "Schritt {step}/{steps}",
  "tool.progress.cached": { one: "{count} aus dem Cache", other: "{count} aus dem Cache" },
  "tool.progress.ran": { one: "{count} ausgeführt", other: "{count} ausgeführt" },
  "tool.stopWaiting": "Nicht mehr warten",
  "tool.interrupt": "Ausführung unterbrechen",
  "tool.serverAsks": "{name} bittet um Ihre Zustimmung.",

  "approval.label": "Der Assistent fragt, bevor er handelt",
  "approval.more": { one: "und {count} weiterer", other: "und {count} weitere" },
  "approval.cost": "Kosten: {cost}",
  "approval.always": "Änderungen am Graphen in diesem Chat ohne Nachfrage erlauben",
  "approval.allow": "Erlauben",
  "approval.deny": "Ablehnen",

  // ── the context gauge, Settings, Egress, Notices, Projects (gauge.ts, Settings.tsx, …) ──

  // ── rewind, citations, delegated tasks, attachments, commands, the panel's own errors ──

  // ── errors the server sends with a code and parameters (error.*) ──
};

export default table;
