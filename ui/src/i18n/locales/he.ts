// עברית. ComfyUI's own he words where it has them: תהליך עבודה, צומת, הגדרות, הרצה, עצירה, שליחה,
// צ'אט חדש, מחיקה, שינוי שם, העתקה, שרת, כלי, גרף, מטמון. Buttons take the verbal noun (שליחה,
// מחיקה), sentences the plural imperative (שאלו, שלחו). Counted nouns take one/two/other.
import type { Translation } from "..";

const limit = "(המגבלה לכל הודעה, בהגדרות). שלחו \"המשך\" כדי להמשיך.";

const table: Translation = {
  "header.newChat": "צ'אט חדש",
  "header.showThreads": "הצגת הצ'אטים",
  "header.hideThreads": "הסתרת הצ'אטים",
  "header.threads": "צ'אטים",
  "header.settings": "הגדרות",
  "header.newThread": "צ'אט חדש",
  "header.openSettings": "פתיחת ההגדרות",
  "header.backToChat": "חזרה לצ'אט",

  "branches.label": "ענפים ({count})",
  "branches.title": "ענפים: מה שהחזרות לאחור הניחו בצד, כדי שתוכלו לחזור אליו",
  "branches.count": { one: "ענף אחד", two: "שני ענפים", other: "{count} ענפים" },
  "branches.menu": "ענפים",
  "branches.returnTitle": {
    one: "חזרה לענף {number}: ההודעה האחת שהונחה בצד",
    two: "חזרה לענף {number}: שתי ההודעות שהונחו בצד",
    other: "חזרה לענף {number}: {count} ההודעות שהונחו בצד",
  },
  "branches.outOfReach": "הענף הזה בא אחרי הודעה שגם היא מונחת עכשיו בצד: חזרו קודם לענף שמכיל את ההודעה הזו.",
  "branches.returnTo": "חזרה לענף {number}",
  "branches.messages": { one: "הודעה אחת", two: "שתי הודעות", other: "{count} הודעות" },

  "threads.noWorkflow": "ללא תהליך עבודה",
  "threads.deleteTitle": "למחוק את הצ'אט הזה?",
  "threads.deleteMessage": "\"{title}\" וההודעות שבו יימחקו מהשרת.",
  "threads.titleInput": "כותרת הצ'אט",
  "threads.answering": "עונה",
  "threads.unbound": "לא משויך לאף תהליך עבודה",
  "threads.rename": "שינוי השם של \"{title}\"",
  "threads.renameShort": "שינוי שם",
  "threads.delete": "מחיקת \"{title}\"",
  "threads.deleteShort": "מחיקה",
  "threads.thisWorkflow": "תהליך העבודה הזה",
  "threads.thisWorkflowHeading": "תהליך העבודה הזה · {name}",
  "threads.none": "אין צ'אטים עדיין: שליחת הודעה פותחת צ'אט.",
  "threads.others": "צ'אטים אחרים",
  "threads.list": "צ'אטים",
  "threads.new": "צ'אט חדש",
  "threads.newButton": "+ צ'אט חדש",
  "threads.loadError": "לא ניתן היה לטעון את הצ'אטים.",
  "threads.loading": "טוען…",
  "threads.loadMore": "טעינת צ'אטים נוספים",
  "threads.more": "עוד…",

  "workflowMenu.moveFailed": "לא ניתן היה להעביר את הצ'אט",
  "workflowMenu.moveHere": "העברה לתהליך העבודה הזה",
  "workflowMenu.unbind": "ניתוק מתהליך העבודה שלו",
  "workflowMenu.label": "תהליך העבודה של \"{title}\"",
  "workflowMenu.title": "תהליך עבודה",
  "runOutputs.more": "+{count} נוספים",
  "runOutputs.label": {
    one: "מה שההרצה יצרה: קובץ אחד",
    two: "מה שההרצה יצרה: שני קבצים",
    other: "מה שההרצה יצרה: {count} קבצים",
  },

  "composer.placeholder": "שאלו על תהליך העבודה שלכם — / לפקודות",
  "composer.message": "הודעה",
  "composer.commands": "פקודות",
  "composer.stopAnswer": "עצירת התשובה",
  "composer.stop": "עצירה",
  "composer.send": "שליחה",
  "composer.sendEnter": "שליחה (Enter)",
  "composer.attaching": "מצרף…",
  "composer.removeRefused": "הסרת הקובץ שלא ניתן היה לצרף",
  "composer.attach": "צירוף קבצים",
  "composer.attachTitle": "צירוף תמונות, תהליכי עבודה או קובצי טקסט",

  "chat.welcome": "שאלו על תהליך העבודה שלכם: לבנות אותו, לתקן אותו, להסביר אותו, להריץ אותו.",
  "chat.welcomeHelp": "הקלידו {slash} כדי לראות את הפקודות — {skill} פועל לפי מיומנות, {help} מציג את כל השאר. המודל והשרת מוגדרים ב{settings}.",
  "chat.settingsLink": "הגדרות",
  "chat.answerFailed": "התשובה נכשלה.",
  "chat.stepLimit": {
    one: `נעצר אחרי שלב אחד ${limit}`,
    two: `נעצר אחרי שני שלבים ${limit}`,
    other: `נעצר אחרי {count} שלבים ${limit}`,
  },
  "chat.waitingForYou": "ממתין לתשובתכם למעלה…",
  "chat.runningTools": "מריץ כלים בחלונית…",

  "message.codeText": "טקסט",
  "message.copyCode": "העתקת הקוד",
  "message.copy": "העתקה",
  "message.copied": "הועתק",
  "message.thinking": "חושב…",
  "message.reasoning": "תהליך החשיבה",
  "message.copyAnswer": "העתקת התשובה",
  "message.answerAgain": "מענה מחדש",
  "message.retry": "ניסיון חוזר",
  "message.runNote": "איך הסתיימה ההרצה (נוסף על ידי החלונית)",
  "message.editNote": "מה ששיניתם ידנית בתהליך העבודה (נוסף על ידי החלונית)",

  "tool.summary": "הכלי {name}: {state}",
  "tool.state.running": "פועל",
  "tool.state.done": "הושלם",
  "tool.state.failed": "נכשל",
  "tool.state.cancelled": "בוטל",
  "tool.state.denied": "נדחה על ידיכם",
  "tool.arguments": "ארגומנטים",
  "tool.error": "שגיאה",
  "tool.result": "תוצאה",
  "tool.running": "פועל…",
  "tool.progress": "פועל: {parts}",
  "tool.progress.node": "צומת {node}",
  "tool.progress.step": "שלב {step}/{steps}",
  "tool.progress.cached": { other: "במטמון: {count}" },
  "tool.progress.ran": { one: "הורץ: {count}", other: "הורצו: {count}" },
  "tool.stopWaiting": "הפסקת ההמתנה",
  "tool.interrupt": "עצירת ההרצה",
  "tool.serverAsks": "הכלי {name} מבקש את אישורכם.",

  "approval.label": "העוזר מבקש רשות לפני שהוא פועל",
  "approval.more": { one: "ועוד אחד", two: "ועוד שניים", other: "ועוד {count}" },
  "approval.cost": "עלות: {cost}",
  "approval.always": "לאפשר עריכות בגרף בצ'אט הזה בלי לשאול",
  "approval.allow": "אישור",
  "approval.deny": "דחייה",

  // ── the context gauge, Settings, Egress, Notices, Projects (gauge.ts, Settings.tsx, …) ──

  // ── rewind, citations, delegated tasks, attachments, commands, the panel's own errors ──

  // ── errors the server sends with a code and parameters (error.*) ──
};

export default table;
