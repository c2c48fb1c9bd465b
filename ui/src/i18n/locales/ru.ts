// Русский. ComfyUI's own ru words where it has them: рабочий процесс, узел, настройки, запустить,
// прервать, отправить, остановить, новый чат, удалить, переименовать, ветка, граф, навык.
// Counted nouns take Russian's one/few/many forms (other: fractions).
import type { Translation } from "..";

const limit = "(лимит на одно сообщение задаётся в настройках). Отправьте «продолжай», чтобы продолжить.";

const table: Translation = {
  "header.newChat": "Новый чат",
  "header.showThreads": "Показать чаты",
  "header.hideThreads": "Скрыть чаты",
  "header.threads": "Чаты",
  "header.settings": "Настройки",
  "header.newThread": "Новый чат",
  "header.openSettings": "Открыть настройки",
  "header.backToChat": "Вернуться к чату",
  "extension.tab": "Ассистент",
  "extension.toggleCommand": "Ассистент: показать/скрыть чат",

  "branches.label": "Ветки ({count})",
  "branches.title": "Ветки: то, что было отложено при откатах; к нему можно вернуться",
  "branches.count": { one: "{count} ветка", few: "{count} ветки", many: "{count} веток", other: "{count} ветки" },
  "branches.menu": "Ветки",
  "branches.returnTitle": {
    one: "Вернуться к ветке {number}: {count} отложенное сообщение",
    few: "Вернуться к ветке {number}: {count} отложенных сообщения",
    many: "Вернуться к ветке {number}: {count} отложенных сообщений",
    other: "Вернуться к ветке {number}: {count} отложенного сообщения",
  },
  "branches.outOfReach": "Эта ветка шла после сообщения, которое теперь само отложено: сначала вернитесь к ветке, в которой есть это сообщение.",
  "branches.returnTo": "Вернуться к ветке {number}",
  "branches.messages": { one: "{count} сообщение", few: "{count} сообщения", many: "{count} сообщений", other: "{count} сообщения" },

  "threads.noWorkflow": "без рабочего процесса",
  "threads.deleteTitle": "Удалить этот чат?",
  "threads.deleteMessage": "Чат «{title}» и все его сообщения будут удалены с сервера.",
  "threads.titleInput": "Название чата",
  "threads.answering": "отвечает",
  "threads.unbound": "Не привязан ни к одному рабочему процессу",
  "threads.rename": "Переименовать «{title}»",
  "threads.renameShort": "Переименовать",
  "threads.delete": "Удалить «{title}»",
  "threads.deleteShort": "Удалить",
  "threads.thisWorkflow": "Этот рабочий процесс",
  "threads.thisWorkflowHeading": "Этот рабочий процесс · {name}",
  "threads.none": "Чатов пока нет: отправьте сообщение, чтобы начать новый.",
  "threads.others": "Другие чаты",
  "threads.list": "Чаты",
  "threads.new": "Новый чат",
  "threads.newButton": "+ Новый чат",
  "threads.loadError": "Не удалось загрузить чаты.",
  "threads.loading": "Загрузка…",
  "threads.loadMore": "Загрузить ещё чаты",
  "threads.more": "ещё…",

  "workflowMenu.moveFailed": "Не удалось переместить чат",
  "workflowMenu.moveHere": "Переместить в этот рабочий процесс",
  "workflowMenu.unbind": "Отвязать от рабочего процесса",
  "workflowMenu.label": "Рабочий процесс чата «{title}»",
  "workflowMenu.title": "Рабочий процесс",
  "runOutputs.more": "+ещё {count}",
  "runOutputs.label": {
    one: "Создано запуском: {count} файл",
    few: "Создано запуском: {count} файла",
    many: "Создано запуском: {count} файлов",
    other: "Создано запуском: {count} файла",
  },

  "composer.placeholder": "Спросите о рабочем процессе — / для команд",
  "composer.message": "Сообщение",
  "composer.commands": "Команды",
  "composer.stopAnswer": "Остановить ответ",
  "composer.stop": "Остановить",
  "composer.send": "Отправить",
  "composer.sendEnter": "Отправить (Enter)",
  "composer.attaching": "Прикрепление…",
  "composer.removeRefused": "Удалите файл, который не удалось прикрепить",
  "composer.attach": "Прикрепить файлы",
  "composer.attachTitle": "Прикрепить изображения, рабочие процессы или текстовые файлы",

  "chat.welcome": "Спросите о рабочем процессе: я помогу его создать, исправить, объяснить и запустить.",
  "chat.welcomeHelp": "Введите {slash} для списка команд — {skill} следует навыку, {help} показывает остальные. Модель и сервер настраиваются в разделе {settings}.",
  "chat.settingsLink": "Настройки",
  "chat.answerFailed": "Не удалось получить ответ.",
  "chat.stepLimit": {
    one: `Остановлено после {count} шага ${limit}`,
    few: `Остановлено после {count} шагов ${limit}`,
    many: `Остановлено после {count} шагов ${limit}`,
    other: `Остановлено после {count} шага ${limit}`,
  },
  "chat.waitingForYou": "Ожидание вашего ответа выше…",
  "chat.runningTools": "Выполнение инструментов в панели…",

  "message.codeText": "текст",
  "message.copyCode": "Копировать код",
  "message.copy": "копировать",
  "message.copied": "скопировано",
  "message.thinking": "Думаю…",
  "message.reasoning": "Рассуждения",
  "message.copyAnswer": "Копировать ответ",
  "message.answerAgain": "Ответить заново",
  "message.retry": "повторить",
  "message.runNote": "Чем закончился запуск (добавлено панелью)",
  "message.editNote": "Что вы изменили в рабочем процессе вручную (добавлено панелью)",

  "tool.summary": "Инструмент {name}: {state}",
  "tool.state.running": "выполняется",
  "tool.state.done": "готово",
  "tool.state.failed": "ошибка",
  "tool.state.cancelled": "отменено",
  "tool.state.denied": "отклонено вами",
  "tool.arguments": "Аргументы",
  "tool.error": "Ошибка",
  "tool.result": "Результат",
  "tool.running": "Выполняется…",
  "tool.progress": "Выполняется: {parts}",
  "tool.progress.node": "узел {node}",
  "tool.progress.step": "шаг {step}/{steps}",
  "tool.progress.cached": { other: "из кэша: {count}" },
  "tool.progress.ran": { other: "выполнено: {count}" },
  "tool.stopWaiting": "Перестать ждать",
  "tool.interrupt": "Прервать запуск",
  "tool.serverAsks": "Инструмент {name} запрашивает ваше разрешение.",

  "approval.label": "Ассистент спрашивает разрешения, прежде чем действовать",
  "approval.more": { other: "и ещё {count}" },
  "approval.cost": "Стоимость: {cost}",
  "approval.always": "Разрешить изменения графа в этом чате без подтверждения",
  "approval.allow": "Разрешить",
  "approval.deny": "Отклонить",

  // ── the context gauge, Settings, Egress, Notices, Projects (gauge.ts, Settings.tsx, …) ──

  // ── rewind, citations, delegated tasks, attachments, commands, the panel's own errors ──

  // ── errors the server sends with a code and parameters (error.*) ──
};

export default table;
