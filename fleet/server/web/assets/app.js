// upgradescope dashboard: fetches the server-rendered fragment of the current URL into
// main#view, keeps every view a URL (links and GET forms are followed with pushState), and
// holds the read token. No framework, no build step.
(function () {
  "use strict";
  var KEY = "upgradescope.token";
  var body = document.body;
  var prefix = body.getAttribute("data-prefix") || "";
  var view = document.getElementById("view");
  var panel = document.getElementById("token-panel");
  var form = document.getElementById("token-form");
  var input = document.getElementById("token-input");
  var remember = document.getElementById("token-remember");
  var reason = document.getElementById("token-reason");
  var forget = document.getElementById("token-forget");
  var seq = 0;
  var loadedAt = 0;
  var FRESH_MS = 60000; // a view older than this is fetched again when its tab is shown

  function token() {
    try { return sessionStorage.getItem(KEY) || localStorage.getItem(KEY) || ""; } catch (e) { return ""; }
  }
  function keep(t, persist) {
    try {
      sessionStorage.setItem(KEY, t);
      if (persist) { localStorage.setItem(KEY, t); } else { localStorage.removeItem(KEY); }
    } catch (e) { /* storage refused: the token lasts this page only */ }
  }
  function drop() {
    try { sessionStorage.removeItem(KEY); localStorage.removeItem(KEY); } catch (e) { /* nothing kept */ }
  }

  // The page a path names, relative to the prefix: "" is the fleet.
  function pagePath(pathname) {
    var p = pathname;
    if (prefix && p.indexOf(prefix) === 0) { p = p.slice(prefix.length); }
    if (p === "" || p === "/") { return "/fleet"; }
    return p;
  }
  function ours(url) {
    if (url.origin !== location.origin) { return false; }
    var p = url.pathname;
    if (prefix && p !== prefix && p.indexOf(prefix + "/") !== 0) { return false; }
    var rest = p.slice(prefix.length);
    return !/^\/(ui|api|assets|bundles|healthz|readyz|metrics)(\/|$)/.test(rest);
  }

  function markNav() {
    var page = pagePath(location.pathname).split("/")[1];
    if (page === "clusters") { page = "fleet"; } // a cluster page is reached from the fleet
    var links = document.querySelectorAll("nav a[data-page]");
    for (var i = 0; i < links.length; i++) {
      if (links[i].getAttribute("data-page") === page) { links[i].setAttribute("aria-current", "page"); }
      else { links[i].removeAttribute("aria-current"); }
    }
  }

  function showToken(message) {
    view.innerHTML = "";
    view.removeAttribute("aria-busy");
    reason.textContent = message || "";
    panel.hidden = false;
    forget.hidden = !token();
    input.focus();
  }
  function showError(message) {
    panel.hidden = true;
    view.removeAttribute("aria-busy");
    view.innerHTML = "";
    var h = document.createElement("h1");
    h.textContent = "Something went wrong";
    var div = document.createElement("div");
    div.id = "error";
    div.setAttribute("role", "alert");
    div.textContent = message;
    view.appendChild(h);
    view.appendChild(div);
  }
  function messageOf(resp) {
    return resp.text().then(function (text) {
      try { return JSON.parse(text).error || resp.statusText; } catch (e) { return text || resp.statusText; }
    });
  }

  function load(focus) {
    var mine = ++seq;
    var headers = {};
    var t = token();
    if (t) { headers.Authorization = "Bearer " + t; }
    view.setAttribute("aria-busy", "true");
    markNav();
    fetch(prefix + "/ui" + pagePath(location.pathname) + location.search,
      { headers: headers, credentials: "omit", cache: "no-store" })
      .then(function (resp) {
        if (mine !== seq) { return; }
        if (resp.status === 401) { return messageOf(resp).then(showToken); }
        if (!resp.ok) { return messageOf(resp).then(showError); }
        return resp.text().then(function (html) {
          if (mine !== seq) { return; }
          loadedAt = Date.now();
          panel.hidden = true;
          forget.hidden = !t;
          view.innerHTML = html; // rendered and escaped by the server, same origin
          view.removeAttribute("aria-busy");
          // The view is in: a failure past here must not reach the .catch below and replace it.
          try { settle(focus); } catch (e) { /* the view stays as loaded */ }
        });
      })
      .catch(function (err) { if (mine === seq) { showError("The server did not answer: " + err.message); } });
  }

  // hashID is the element id a #hash names: decoded, or as written when its escapes are
  // malformed (#%E0%A4%A), which decodeURIComponent throws on.
  function hashID(hash) {
    var raw = hash.slice(1);
    try { return decodeURIComponent(raw); } catch (e) { return raw; }
  }

  // settle titles the document after the view's heading, and moves to a deep-linked finding
  // or, after a navigation, to the heading, so a screen reader hears the new view.
  function settle(focus) {
    var h1 = view.querySelector("h1");
    document.title = (h1 ? h1.textContent + " · " : "") + "upgradescope";
    var current = view.querySelector('[aria-current="true"].finding');
    var anchor = location.hash ? document.getElementById(hashID(location.hash)) : null;
    if (anchor && !current) {
      anchor.scrollIntoView({ block: "start" });
    } else if (current) {
      current.setAttribute("tabindex", "-1");
      current.scrollIntoView({ block: "start" });
      current.focus({ preventScroll: true });
    } else if (focus && h1) {
      h1.setAttribute("tabindex", "-1");
      h1.focus();
    }
  }

  function go(url) {
    history.pushState(null, "", url.pathname + url.search + url.hash);
    load(true);
  }

  document.addEventListener("click", function (e) {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) { return; }
    var a = e.target.closest && e.target.closest("a[href]");
    if (!a || a.target || a.hasAttribute("download")) { return; }
    var url = new URL(a.href, location.href);
    if (!ours(url)) { return; }
    if (url.hash && url.pathname === location.pathname && url.search === location.search) { return; }
    e.preventDefault();
    go(url);
  });

  // Exports are read routes: a plain link would carry no token, so the file is fetched with
  // it and handed to the browser as a download (a blob: URL, same document, no CSP source).
  function fileName(resp, fallback) {
    var m = /filename="([^"]+)"/.exec(resp.headers.get("Content-Disposition") || "");
    return m ? m[1] : fallback;
  }
  function download(a) {
    var status = document.getElementById("export-status");
    var say = function (text) { if (status) { status.textContent = text; } };
    var headers = {};
    var t = token();
    if (t) { headers.Authorization = "Bearer " + t; }
    say("Downloading " + a.textContent + "…");
    fetch(a.href, { headers: headers, credentials: "omit", cache: "no-store" })
      .then(function (resp) {
        if (!resp.ok) { return messageOf(resp).then(function (m) { say("Download failed: " + m); }); }
        var name = fileName(resp, "upgradescope-export." + a.getAttribute("data-export"));
        return resp.blob().then(function (blob) {
          var url = URL.createObjectURL(blob);
          var tmp = document.createElement("a");
          tmp.href = url;
          tmp.download = name;
          tmp.hidden = true;
          document.body.appendChild(tmp);
          tmp.click();
          tmp.remove();
          setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
          say("Downloaded " + name + " (" + blob.size + " bytes).");
        });
      })
      .catch(function (err) { say("Download failed: " + err.message); });
  }
  view.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a[data-export]");
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) { return; }
    e.preventDefault();
    download(a);
  });

  // GET forms of the view become URLs: empty fields are left out so links stay short.
  view.addEventListener("submit", function (e) {
    var f = e.target;
    if ((f.getAttribute("method") || "get").toLowerCase() !== "get") { return; }
    var url = new URL(f.getAttribute("action") || location.pathname, location.href);
    if (!ours(url)) { return; }
    e.preventDefault();
    var params = new URLSearchParams();
    new FormData(f).forEach(function (v, k) { if (v !== "") { params.append(k, v); } });
    url.search = params.toString();
    go(url);
  });
  view.addEventListener("change", function (e) {
    if (e.target.tagName === "SELECT" && e.target.form) {
      if (e.target.form.requestSubmit) { e.target.form.requestSubmit(); } else { e.target.form.submit(); }
    }
  });

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var t = input.value.trim();
    if (!t) { reason.textContent = "Enter a read token."; input.focus(); return; }
    keep(t, remember.checked);
    input.value = "";
    load(true);
  });
  forget.addEventListener("click", function () {
    drop();
    forget.hidden = true;
    load(true);
  });

  window.addEventListener("popstate", function () { load(false); });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible" && loadedAt && Date.now() - loadedAt > FRESH_MS && panel.hidden) { load(false); }
  });
  forget.hidden = !token();
  load(false);
})();
