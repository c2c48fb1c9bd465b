// Every unit test file starts with all the translations at hand, so that `setLocale("zh")`
// switches at once, as the panel does once a table is fetched (loader.test.ts tests the fetch).
import { registerTable } from "../src/i18n/tables";
import { TABLES } from "../src/i18n/locales";
import { SHIPPED_TAGS } from "../src/i18n/shipped";

for (const tag of SHIPPED_TAGS) registerTable(tag, TABLES[tag]);
