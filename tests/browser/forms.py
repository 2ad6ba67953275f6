"""Signing in and sending forms in the browser tests, and what a form sent back with errors must
show: the focus on the first invalid field, described by its errors, and sound markup."""

from __future__ import annotations

import re

from playwright.sync_api import expect


def log_in(page, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/my/bots/$"))


POST_WITH_CSRF = """(action) => {
  const form = document.createElement("form");
  form.method = "post";
  form.action = action;
  const input = document.createElement("input");
  input.name = "csrfmiddlewaretoken";
  input.value = (document.cookie.match(/csrftoken=([^;]+)/) || ["", ""])[1];
  form.append(input);
  document.body.append(form);
  form.submit();
}"""


def focused_is_invalid_and_described(page) -> dict:
    """What has the focus after a form was sent back with errors: its id, ``aria-invalid`` and
    the texts that describe it.

    Submitting navigates, and ``click`` does not wait for the answer: read at once, the page
    may still be the form being left (focus on its button) or none yet (no active element).
    So wait, as a user would, for a page whose focus is on an invalid field."""
    expect(page.locator("[aria-invalid='true']:focus")).to_have_count(1)
    return page.evaluate(
        """() => {
          const el = document.activeElement;
          const ids = (el.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
          return {
            id: el.id,
            invalid: el.getAttribute("aria-invalid"),
            described: ids.map((id) => (document.getElementById(id) || {}).textContent || null),
          };
        }"""
    )


FORM_MARKUP_PROBLEMS = """() => {
  const problems = [];
  for (const el of document.querySelectorAll("[aria-describedby]")) {
    for (const id of el.getAttribute("aria-describedby").split(" ").filter(Boolean)) {
      if (!document.getElementById(id)) problems.push(`${el.id} described by missing #${id}`);
    }
  }
  if (document.querySelector("ul[role=alert], p ul, p .errorlist")) {
    problems.push("an error list in a p, or with role=alert");
  }
  return problems;
}"""
