// Français. ComfyUI's own fr words where it has them: workflow, nœud, graphe, Paramètres, Arrêter,
// Envoyer, Nouvelle discussion (a thread is a « discussion »), Supprimer, Renommer, Copier, Copié,
// Réessayer, Réflexion, exécution/Exécuter, Interrompre, outil, compétence, Joindre, Annulé.
// French typography: « » quotes, a narrow no-break space (U+202F) before ? ! : ; and inside « ».
import type { Translation } from "..";

const limit = "(la limite par message, dans les Paramètres). Envoyez « continuer » pour poursuivre.";

const table: Translation = {
  "header.newChat": "Nouvelle discussion",
  "header.showThreads": "Afficher les discussions",
  "header.hideThreads": "Masquer les discussions",
  "header.threads": "Discussions",
  "header.settings": "Paramètres",
  "header.newThread": "Nouvelle discussion",
  "header.openSettings": "Ouvrir les paramètres",
  "header.backToChat": "Retour à la discussion",
  "extension.tab": "Assistant",
  "extension.toggleCommand": "Assistant : afficher ou masquer la discussion",

  "branches.label": "Branches ({count})",
  "branches.title": "Branches : ce que les retours en arrière ont mis de côté, pour y revenir",
  "branches.count": { one: "{count} branche", many: "{count} de branches", other: "{count} branches" },
  "branches.menu": "Branches",
  "branches.returnTitle": {
    one: "Revenir à la branche {number} : {count} message mis de côté",
    many: "Revenir à la branche {number} : {count} de messages mis de côté",
    other: "Revenir à la branche {number} : {count} messages mis de côté",
  },
  "branches.outOfReach": "Cette branche suivait un message qui est désormais lui-même mis de côté : revenez d’abord à la branche qui contient ce message.",
  "branches.returnTo": "Revenir à la branche {number}",
  "branches.messages": { one: "{count} message", many: "{count} de messages", other: "{count} messages" },

  "threads.noWorkflow": "sans workflow",
  "threads.deleteTitle": "Supprimer cette discussion ?",
  "threads.deleteMessage": "« {title} » et ses messages seront supprimés du serveur.",
  "threads.titleInput": "Titre de la discussion",
  "threads.answering": "réponse en cours",
  "threads.unbound": "Non associée à un workflow",
  "threads.rename": "Renommer « {title} »",
  "threads.renameShort": "Renommer",
  "threads.delete": "Supprimer « {title} »",
  "threads.deleteShort": "Supprimer",
  "threads.thisWorkflow": "Ce workflow",
  "threads.thisWorkflowHeading": "Ce workflow · {name}",
  "threads.none": "Aucune discussion pour l’instant : envoyez un message pour en commencer une.",
  "threads.others": "Autres discussions",
  "threads.list": "Discussions",
  "threads.new": "Nouvelle discussion",
  "threads.newButton": "+ Nouvelle discussion",
  "threads.loadError": "Impossible de charger les discussions.",
  "threads.loading": "Chargement…",
  "threads.loadMore": "Charger plus de discussions",
  "threads.more": "plus…",

  "workflowMenu.moveFailed": "Impossible de déplacer la discussion",
  "workflowMenu.moveHere": "Déplacer vers ce workflow",
  "workflowMenu.unbind": "Dissocier de son workflow",
  "workflowMenu.label": "Workflow de « {title} »",
  "workflowMenu.title": "Workflow",
  "runOutputs.more": "+{count} autres",
  "runOutputs.label": {
    one: "Produit par l’exécution : {count} fichier",
    many: "Produit par l’exécution : {count} de fichiers",
    other: "Produit par l’exécution : {count} fichiers",
  },

  "composer.placeholder": "Posez une question sur votre workflow — / pour les commandes",
  "composer.message": "Message",
  "composer.commands": "Commandes",
  "composer.stopAnswer": "Arrêter la réponse",
  "composer.stop": "Arrêter",
  "composer.send": "Envoyer",
  "composer.sendEnter": "Envoyer (Entrée)",
  "composer.attaching": "Ajout des pièces jointes…",
  "composer.removeRefused": "Retirez le fichier qui n’a pas pu être joint",
  "composer.attach": "Joindre des fichiers",
  "composer.attachTitle": "Joindre des images, des workflows ou des fichiers texte",

  "chat.welcome": "Posez vos questions sur votre workflow : le créer, le corriger, l’expliquer, l’exécuter.",
  "chat.welcomeHelp": "Tapez {slash} pour les commandes — {skill} applique une compétence, {help} liste les autres. Le modèle et le serveur se règlent dans les {settings}.",
  "chat.settingsLink": "Paramètres",
  "chat.answerFailed": "La réponse a échoué.",
  "chat.stepLimit": {
    one: `Arrêté après {count} étape ${limit}`,
    many: `Arrêté après {count} d’étapes ${limit}`,
    other: `Arrêté après {count} étapes ${limit}`,
  },
  "chat.waitingForYou": "En attente de votre réponse ci-dessus…",
  "chat.runningTools": "Exécution des outils dans le panneau…",

  "message.codeText": "texte",
  "message.copyCode": "Copier le code",
  "message.copy": "copier",
  "message.copied": "copié",
  "message.thinking": "Réflexion…",
  "message.reasoning": "Raisonnement",
  "message.copyAnswer": "Copier la réponse",
  "message.answerAgain": "Répondre à nouveau",
  "message.retry": "réessayer",
  "message.runNote": "Comment l’exécution s’est terminée (ajouté par le panneau)",
  "message.editNote": "Ce que vous avez modifié à la main dans le workflow (ajouté par le panneau)",

  "tool.summary": "Outil {name} : {state}",
  "tool.state.running": "en cours",
  "tool.state.done": "terminé",
  "tool.state.failed": "échec",
  "tool.state.cancelled": "annulé",
  "tool.state.denied": "refusé par vous",
  "tool.arguments": "Arguments",
  "tool.error": "Erreur",
  "tool.result": "Résultat",
  "tool.running": "Exécution…",
  "tool.progress": "Exécution : {parts}",
  "tool.progress.node": "nœud {node}",
  "tool.progress.step": "étape {step}/{steps}",
  "tool.progress.cached": { other: "{count} en cache" },
  "tool.progress.ran": { one: "{count} exécuté", other: "{count} exécutés" },
  "tool.stopWaiting": "Arrêter d’attendre",
  "tool.interrupt": "Interrompre l’exécution",
  "tool.serverAsks": "{name} demande votre approbation.",

  "approval.label": "L’assistant demande avant d’agir",
  "approval.more": { one: "et {count} autre", other: "et {count} autres" },
  "approval.cost": "Coût : {cost}",
  "approval.always": "Autoriser les modifications du graphe dans cette discussion sans demander",
  "approval.allow": "Autoriser",
  "approval.deny": "Refuser",

  // ── the context gauge, Settings, Egress, Notices, Projects (gauge.ts, Settings.tsx, …) ──

  // ── rewind, citations, delegated tasks, attachments, commands, the panel's own errors ──

  // ── errors the server sends with a code and parameters (error.*) ──
};

export default table;
