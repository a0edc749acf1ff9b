// Sign in and create an account.

import { ApiError, post } from "./api.js";
import { h, replace, uid } from "./dom.js";

const MIN_PASSWORD = 10;

function field(label, attrs) {
  const id = uid("field");
  return h("div", { class: "field" },
    h("label", { for: id }, label),
    h("input", { id, ...attrs }));
}

const INVITE_ROUTE = /^#\/invite\/([A-Za-z0-9_-]{1,100})$/;

/** The invite token of an invite link (#/invite/<token>), or null. */
export function inviteInAddress() {
  const match = window.location.hash.match(INVITE_ROUTE);
  return match ? match[1] : null;
}

/** Show the sign-in / sign-up form in `root`; calls onSignedIn() once a session exists. An
 * invite link opens the sign-up form, which sends its token. */
export function renderAuth(root, onSignedIn, mode = inviteInAddress() ? "signup" : "login") {
  const signup = mode === "signup";
  const invite = signup ? inviteInAddress() : null;
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const email = field("Email", { type: "email", name: "email", autocomplete: "email", required: true });
  const password = field("Password", {
    type: "password", name: "password", required: true,
    autocomplete: signup ? "new-password" : "current-password",
    minlength: signup ? MIN_PASSWORD : null,
    "aria-describedby": signup ? "password-hint" : null,
  });
  const submit = h("button", { type: "submit", class: "primary" }, signup ? "Create account" : "Sign in");
  const form = h("form", { class: "auth-form", novalidate: true },
    error, email,
    password,
    signup ? h("p", { id: "password-hint", class: "meta" }, `At least ${MIN_PASSWORD} characters.`) : null,
    submit);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    const values = Object.fromEntries(new FormData(form));
    if (invite) values.invite = invite;
    if (!form.checkValidity()) {
      error.textContent = signup
        ? `Enter your email and a password of at least ${MIN_PASSWORD} characters.`
        : "Enter your email and password.";
      error.hidden = false;
      form.querySelector(":invalid").focus();
      return;
    }
    submit.disabled = true;
    try {
      await post(signup ? "/api/auth/signup" : "/api/auth/login", values);
      if (inviteInAddress()) window.history.replaceState(null, "", "#/");
      await onSignedIn();
    } catch (failure) {
      error.textContent = failure instanceof ApiError ? failure.message : "Something went wrong.";
      error.hidden = false;
      submit.disabled = false;
      form.querySelector("input").focus();
    }
  });

  const other = h("button", { type: "button", class: "link-button" },
    signup ? "I already have an account" : "Create an account");
  other.addEventListener("click", () => renderAuth(root, onSignedIn, signup ? "login" : "signup"));

  replace(root, h("main", { id: "main", class: "auth", tabindex: "-1" },
    h("div", { class: "auth-card" },
      h("h1", { class: "brand-title" }, "Lookout"),
      h("p", { class: "tagline" }, "Ask about any web page, or have Lookout keep watch and tell you what changed."),
      h("h2", {}, signup ? "Create your account" : "Sign in"),
      invite ? h("p", { class: "meta" }, "You were invited to a workspace: sign up with the email the invite was sent to.") : null,
      form,
      h("p", { class: "switch" }, other))));
  root.setAttribute("aria-busy", "false");
  document.title = signup ? "Create account · Lookout" : "Sign in · Lookout";
  email.querySelector("input").focus();
}
