// Every translation table by its tag: what the build writes as ui/dist/locales/<tag>.json
// (vite.config.ts) and what the unit tests register up front (ui/test/vitest.setup.ts). The panel's
// own code never imports this file: it fetches a table when its language is chosen.
import type { Translation } from "..";
import type { ShippedTag } from "../shipped";
import ar from "./ar.ts";
import de from "./de.ts";
import es from "./es.ts";
import fa from "./fa.ts";
import fr from "./fr.ts";
import he from "./he.ts";
import it from "./it.ts";
import ja from "./ja.ts";
import ko from "./ko.ts";
import ptBR from "./pt-BR.ts";
import ru from "./ru.ts";
import tr from "./tr.ts";
import zh from "./zh.ts";
import zhTW from "./zh-TW.ts";

export const TABLES: Record<ShippedTag, Translation> = { ar, de, es, fa, fr, he, it, ja, ko, "pt-BR": ptBR, ru, tr, zh, "zh-TW": zhTW };
