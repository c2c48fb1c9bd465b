// Every unit test file starts with all the translations at hand, so that `setLocale("zh")`
// switches at once, as the panel does once a table is fetched (loader.test.ts tests the fetch).
import { registerTable } from "./tables";
import { TABLES } from "./locales";
import { SHIPPED_TAGS } from "./shipped";

for (const tag of SHIPPED_TAGS) registerTable(tag, TABLES[tag]);
