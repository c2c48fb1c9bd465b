// Português (Brasil). ComfyUI's own pt-BR words where it has them: fluxo de trabalho, nó, grafo,
// Configurações, Parar, Enviar, Nova conversa (a thread is a “conversa”, as in its Histórico de
// conversas), Excluir, Renomear, Copiar, Copiado, Tentar novamente, Pensando, execução/Executar,
// Interromper, ferramenta, habilidade, Anexar, Cancelado, Ramificação; você, as its agent panel.
import type { Translation } from "..";

const limit = "(o limite por mensagem, em Configurações). Envie “continue” para prosseguir.";

const table: Translation = {
  "header.newChat": "Nova conversa",
  "header.showThreads": "Mostrar as conversas",
  "header.hideThreads": "Ocultar as conversas",
  "header.threads": "Conversas",
  "header.settings": "Configurações",
  "header.newThread": "Nova conversa",
  "header.openSettings": "Abrir as configurações",
  "header.backToChat": "Voltar à conversa",
  "extension.tab": "Assistente",
  "extension.toggleCommand": "Assistente: mostrar ou ocultar a conversa",

  "branches.label": "Ramificações ({count})",
  "branches.title": "Ramificações: o que foi deixado de lado ao voltar atrás na conversa, para retomar",
  "branches.count": { one: "{count} ramificação", many: "{count} de ramificações", other: "{count} ramificações" },
  "branches.menu": "Ramificações",
  "branches.returnTitle": {
    one: "Voltar à ramificação {number}: {count} mensagem deixada de lado",
    many: "Voltar à ramificação {number}: {count} de mensagens deixadas de lado",
    other: "Voltar à ramificação {number}: {count} mensagens deixadas de lado",
  },
  "branches.outOfReach": "Esta ramificação vinha depois de uma mensagem que agora também foi deixada de lado: volte primeiro à ramificação que contém essa mensagem.",
  "branches.returnTo": "Voltar à ramificação {number}",
  "branches.messages": { one: "{count} mensagem", many: "{count} de mensagens", other: "{count} mensagens" },

  "threads.noWorkflow": "sem fluxo de trabalho",
  "threads.deleteTitle": "Excluir esta conversa?",
  "threads.deleteMessage": "“{title}” e suas mensagens serão excluídas do servidor.",
  "threads.titleInput": "Título da conversa",
  "threads.answering": "respondendo",
  "threads.unbound": "Não vinculada a nenhum fluxo de trabalho",
  "threads.rename": "Renomear “{title}”",
  "threads.renameShort": "Renomear",
  "threads.delete": "Excluir “{title}”",
  "threads.deleteShort": "Excluir",
  "threads.thisWorkflow": "Este fluxo de trabalho",
  "threads.thisWorkflowHeading": "Este fluxo de trabalho · {name}",
  "threads.none": "Ainda não há conversas: envie uma mensagem para começar uma.",
  "threads.others": "Outras conversas",
  "threads.list": "Conversas",
  "threads.new": "Nova conversa",
  "threads.newButton": "+ Nova conversa",
  "threads.loadError": "Não foi possível carregar as conversas.",
  "threads.loading": "Carregando…",
  "threads.loadMore": "Carregar mais conversas",
  "threads.more": "mais…",

  "workflowMenu.moveFailed": "Não foi possível mover a conversa",
  "workflowMenu.moveHere": "Mover para este fluxo de trabalho",
  "workflowMenu.unbind": "Desvincular do fluxo de trabalho",
  "workflowMenu.label": "Fluxo de trabalho de “{title}”",
  "workflowMenu.title": "Fluxo de trabalho",
  "runOutputs.more": "+{count} outros",
  "runOutputs.label": {
    one: "O que a execução gerou: {count} arquivo",
    many: "O que a execução gerou: {count} de arquivos",
    other: "O que a execução gerou: {count} arquivos",
  },

  "composer.placeholder": "Pergunte sobre seu fluxo de trabalho — / para ver os comandos",
  "composer.message": "Mensagem",
  "composer.commands": "Comandos",
  "composer.stopAnswer": "Parar a resposta",
  "composer.stop": "Parar",
  "composer.send": "Enviar",
  "composer.sendEnter": "Enviar (Enter)",
  "composer.attaching": "Anexando…",
  "composer.removeRefused": "Remova o arquivo que não pôde ser anexado",
  "composer.attach": "Anexar arquivos",
  "composer.attachTitle": "Anexar imagens, fluxos de trabalho ou arquivos de texto",

  "chat.welcome": "Pergunte sobre seu fluxo de trabalho: criar, corrigir, explicar, executar.",
  "chat.welcomeHelp": "Digite {slash} para ver os comandos — {skill} aplica uma habilidade, {help} lista o restante. O modelo e o servidor são definidos em {settings}.",
  "chat.settingsLink": "Configurações",
  "chat.answerFailed": "Falha na resposta.",
  "chat.stepLimit": {
    one: `Parado após {count} etapa ${limit}`,
    many: `Parado após {count} de etapas ${limit}`,
    other: `Parado após {count} etapas ${limit}`,
  },
  "chat.waitingForYou": "Aguardando sua resposta acima…",
  "chat.runningTools": "Executando ferramentas no painel…",

  "message.codeText": "texto",
  "message.copyCode": "Copiar o código",
  "message.copy": "copiar",
  "message.copied": "copiado",
  "message.thinking": "Pensando…",
  "message.reasoning": "Raciocínio",
  "message.copyAnswer": "Copiar a resposta",
  "message.answerAgain": "Responder novamente",
  "message.retry": "tentar novamente",
  "message.runNote": "Como uma execução terminou (adicionado pelo painel)",
  "message.editNote": "O que você alterou manualmente no fluxo de trabalho (adicionado pelo painel)",

  "tool.summary": "Ferramenta {name}: {state}",
  "tool.state.running": "em execução",
  "tool.state.done": "concluída",
  "tool.state.failed": "falhou",
  "tool.state.cancelled": "cancelada",
  "tool.state.denied": "negada por você",
  "tool.arguments": "Argumentos",
  "tool.error": "Erro",
  "tool.result": "Resultado",
  "tool.running": "Executando…",
  "tool.progress": "Executando: {parts}",
  "tool.progress.node": "nó {node}",
  "tool.progress.step": "passo {step}/{steps}",
  "tool.progress.cached": { other: "{count} em cache" },
  "tool.progress.ran": { one: "{count} executado", other: "{count} executados" },
  "tool.stopWaiting": "Parar de esperar",
  "tool.interrupt": "Interromper a execução",
  "tool.serverAsks": "{name} pede sua aprovação.",

  "approval.label": "O assistente pergunta antes de agir",
  "approval.more": { other: "e mais {count}" },
  "approval.cost": "Custo: {cost}",
  "approval.always": "Permitir edições do grafo nesta conversa sem perguntar",
  "approval.allow": "Permitir",
  "approval.deny": "Negar",

  // ── the context gauge, Settings, Egress, Notices, Projects (gauge.ts, Settings.tsx, …) ──

  // ── rewind, citations, delegated tasks, attachments, commands, the panel's own errors ──

  // ── errors the server sends with a code and parameters (error.*) ──
};

export default table;
