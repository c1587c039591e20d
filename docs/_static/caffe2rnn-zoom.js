/* caffe2rnn docs: every diagram opens full size in a pan/zoom viewer.
   Diagrams are SVG images; the page shows them scaled to the text column,
   where a big one would have 2 px text. A click opens the viewer at 100 %
   (drag to pan, wheel or +/- to zoom, 0 to fit, Esc or x to close). */
(function () {
  "use strict";

  function open(src, alt) {
    var viewer = document.createElement("div");
    viewer.className = "c2r-viewer";
    viewer.setAttribute("role", "dialog");
    viewer.setAttribute("aria-label", alt || "diagram");
    var img = document.createElement("img");
    img.src = src;
    img.alt = alt || "";
    var bar = document.createElement("div");
    bar.className = "c2r-bar";
    var scale = 1, x = 16, y = 48, drag = null;
    function apply() {
      img.style.transform = "translate(" + x + "px," + y + "px) scale(" + scale + ")";
    }
    function zoom(factor, cx, cy) {
      cx = cx === undefined ? window.innerWidth / 2 : cx;
      cy = cy === undefined ? window.innerHeight / 2 : cy;
      x = cx - (cx - x) * factor;
      y = cy - (cy - y) * factor;
      scale *= factor;
      apply();
    }
    function fit() {
      var w = img.naturalWidth || 1, h = img.naturalHeight || 1;
      scale = Math.min((window.innerWidth - 32) / w, (window.innerHeight - 64) / h, 1);
      x = 16; y = 48; apply();
    }
    function close() {
      document.removeEventListener("keydown", keys);
      viewer.remove();
    }
    function keys(e) {
      if (e.key === "Escape") { close(); }
      else if (e.key === "+" || e.key === "=") { zoom(1.25); }
      else if (e.key === "-") { zoom(0.8); }
      else if (e.key === "0") { fit(); }
    }
    [["+", function () { zoom(1.25); }], ["\u2212", function () { zoom(0.8); }],
     ["fit", fit], ["100 %", function () { scale = 1; x = 16; y = 48; apply(); }],
     ["\u00d7", close]].forEach(function (b) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = b[0];
      button.addEventListener("click", function (e) { e.stopPropagation(); b[1](); });
      bar.appendChild(button);
    });
    viewer.addEventListener("wheel", function (e) {
      e.preventDefault();
      zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX, e.clientY);
    }, { passive: false });
    viewer.addEventListener("mousedown", function (e) {
      drag = [e.clientX - x, e.clientY - y];
      viewer.style.cursor = "grabbing";
    });
    window.addEventListener("mousemove", function (e) {
      if (drag) { x = e.clientX - drag[0]; y = e.clientY - drag[1]; apply(); }
    });
    window.addEventListener("mouseup", function () {
      drag = null;
      viewer.style.cursor = "grab";
    });
    document.addEventListener("keydown", keys);
    viewer.appendChild(img);
    viewer.appendChild(bar);
    document.body.appendChild(viewer);
    apply();
  }

  function setUp() {
    document.querySelectorAll("article img, .bd-article img").forEach(function (img) {
      if (!/\.svg(\?|#|$)/.test(img.getAttribute("src") || "")) { return; }
      img.classList.add("c2r-zoomable");
      img.title = "click to open full size (drag to pan, wheel to zoom)";
      img.addEventListener("click", function (e) {
        e.preventDefault();
        open(img.currentSrc || img.src, img.alt);
      });
      var link = img.closest("a");
      if (link) { link.addEventListener("click", function (e) { e.preventDefault(); }); }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
