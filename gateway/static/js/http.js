// The gateway's HTTP API as the pages call it: JSON in, JSON out, a refusal thrown as {code}.
import { t, has } from "./i18n.js";

// `headers`: more request headers. A refusal is thrown as { code, status } from the answer's
// detail.code (404: not_found, 422: bad_name, as the forms word them); no answer: { code: "network" }.
export async function api(method, path, body, { headers = {} } = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: body ? { "content-type": "application/json", ...headers } : headers,
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    throw { code: "network" };
  }
  const data = await res.json().catch(() => ({}));
  if (res.status === 404) throw { code: "not_found", status: 404 };
  if (res.status === 422) throw { code: "bad_name", status: 422 };
  if (!res.ok) throw { code: data?.detail?.code ?? "unknown", status: res.status };
  return data;
}

export function errorText(err) {
  return has(`error.${err?.code}`) ? t(`error.${err.code}`) : t("error.unknown");
}

// The rules' declaration (GET /api/rules: roles, house rules, presets, durations, event kinds),
// fetched once per page; retried until the gateway answers.
export async function loadDeclaration() {
  for (let pause = 500; ; pause = Math.min(pause * 2, 8000)) {
    try {
      const r = await fetch("/api/rules");
      if (r.ok) return await r.json();
    } catch { /* offline for a moment: try again */ }
    await new Promise((done) => setTimeout(done, pause));
  }
}
