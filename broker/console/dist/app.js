(()=>{var Y,k,ye,et,W,ge,we,xe,ke,ie,ne,ae,tt,V={},Ce=[],rt=/acit|ex(?:s|g|n|p|$)|rph|grid|ows|mnc|ntw|ine[ch]|zoo|^ord|itera/i,Z=Array.isArray;function R(e,t){for(var r in t)e[r]=t[r];return e}function le(e){e&&e.parentNode&&e.parentNode.removeChild(e)}function ce(e,t,r){var o,s,n,a={};for(n in t)n=="key"?o=t[n]:n=="ref"?s=t[n]:a[n]=t[n];if(arguments.length>2&&(a.children=arguments.length>3?Y.call(arguments,2):r),typeof e=="function"&&e.defaultProps!=null)for(n in e.defaultProps)a[n]===void 0&&(a[n]=e.defaultProps[n]);return J(e,a,o,s,null)}function J(e,t,r,o,s){var n={type:e,props:t,key:r,ref:o,__k:null,__:null,__b:0,__e:null,__c:null,constructor:void 0,__v:s??++ye,__i:-1,__u:0};return s==null&&k.vnode!=null&&k.vnode(n),n}function ee(e){return e.children}function Q(e,t){this.props=e,this.context=t}function j(e,t){if(t==null)return e.__?j(e.__,e.__i+1):null;for(var r;t<e.__k.length;t++)if((r=e.__k[t])!=null&&r.__e!=null)return r.__e;return typeof e.type=="function"?j(e):null}function Se(e){var t,r;if((e=e.__)!=null&&e.__c!=null){for(e.__e=e.__c.base=null,t=0;t<e.__k.length;t++)if((r=e.__k[t])!=null&&r.__e!=null){e.__e=e.__c.base=r.__e;break}return Se(e)}}function be(e){(!e.__d&&(e.__d=!0)&&W.push(e)&&!X.__r++||ge!=k.debounceRendering)&&((ge=k.debounceRendering)||we)(X)}function X(){for(var e,t,r,o,s,n,a,c=1;W.length;)W.length>c&&W.sort(xe),e=W.shift(),c=W.length,e.__d&&(r=void 0,o=void 0,s=(o=(t=e).__v).__e,n=[],a=[],t.__P&&((r=R({},o)).__v=o.__v+1,k.vnode&&k.vnode(r),ue(t.__P,r,o,t.__n,t.__P.namespaceURI,32&o.__u?[s]:null,n,s??j(o),!!(32&o.__u),a),r.__v=o.__v,r.__.__k[r.__i]=r,Te(n,r,a),o.__e=o.__=null,r.__e!=s&&Se(r)));X.__r=0}function Pe(e,t,r,o,s,n,a,c,l,u,_){var i,p,f,$,x,g,h,b=o&&o.__k||Ce,T=t.length;for(l=ot(r,t,b,l,T),i=0;i<T;i++)(f=r.__k[i])!=null&&(p=f.__i==-1?V:b[f.__i]||V,f.__i=i,g=ue(e,f,p,s,n,a,c,l,u,_),$=f.__e,f.ref&&p.ref!=f.ref&&(p.ref&&de(p.ref,null,f),_.push(f.ref,f.__c||$,f)),x==null&&$!=null&&(x=$),(h=!!(4&f.__u))||p.__k===f.__k?l=Ee(f,l,e,h):typeof f.type=="function"&&g!==void 0?l=g:$&&(l=$.nextSibling),f.__u&=-7);return r.__e=x,l}function ot(e,t,r,o,s){var n,a,c,l,u,_=r.length,i=_,p=0;for(e.__k=new Array(s),n=0;n<s;n++)(a=t[n])!=null&&typeof a!="boolean"&&typeof a!="function"?(l=n+p,(a=e.__k[n]=typeof a=="string"||typeof a=="number"||typeof a=="bigint"||a.constructor==String?J(null,a,null,null,null):Z(a)?J(ee,{children:a},null,null,null):a.constructor==null&&a.__b>0?J(a.type,a.props,a.key,a.ref?a.ref:null,a.__v):a).__=e,a.__b=e.__b+1,c=null,(u=a.__i=nt(a,r,l,i))!=-1&&(i--,(c=r[u])&&(c.__u|=2)),c==null||c.__v==null?(u==-1&&(s>_?p--:s<_&&p++),typeof a.type!="function"&&(a.__u|=4)):u!=l&&(u==l-1?p--:u==l+1?p++:(u>l?p--:p++,a.__u|=4))):e.__k[n]=null;if(i)for(n=0;n<_;n++)(c=r[n])!=null&&(2&c.__u)==0&&(c.__e==o&&(o=j(c)),De(c,c));return o}function Ee(e,t,r,o){var s,n;if(typeof e.type=="function"){for(s=e.__k,n=0;s&&n<s.length;n++)s[n]&&(s[n].__=e,t=Ee(s[n],t,r,o));return t}e.__e!=t&&(o&&(t&&e.type&&!t.parentNode&&(t=j(e)),r.insertBefore(e.__e,t||null)),t=e.__e);do t=t&&t.nextSibling;while(t!=null&&t.nodeType==8);return t}function nt(e,t,r,o){var s,n,a,c=e.key,l=e.type,u=t[r],_=u!=null&&(2&u.__u)==0;if(u===null&&e.key==null||_&&c==u.key&&l==u.type)return r;if(o>(_?1:0)){for(s=r-1,n=r+1;s>=0||n<t.length;)if((u=t[a=s>=0?s--:n++])!=null&&(2&u.__u)==0&&c==u.key&&l==u.type)return a}return-1}function $e(e,t,r){t[0]=="-"?e.setProperty(t,r??""):e[t]=r==null?"":typeof r!="number"||rt.test(t)?r:r+"px"}function q(e,t,r,o,s){var n,a;e:if(t=="style")if(typeof r=="string")e.style.cssText=r;else{if(typeof o=="string"&&(e.style.cssText=o=""),o)for(t in o)r&&t in r||$e(e.style,t,"");if(r)for(t in r)o&&r[t]==o[t]||$e(e.style,t,r[t])}else if(t[0]=="o"&&t[1]=="n")n=t!=(t=t.replace(ke,"$1")),a=t.toLowerCase(),t=a in e||t=="onFocusOut"||t=="onFocusIn"?a.slice(2):t.slice(2),e.l||(e.l={}),e.l[t+n]=r,r?o?r.u=o.u:(r.u=ie,e.addEventListener(t,n?ae:ne,n)):e.removeEventListener(t,n?ae:ne,n);else{if(s=="http://www.w3.org/2000/svg")t=t.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(t!="width"&&t!="height"&&t!="href"&&t!="list"&&t!="form"&&t!="tabIndex"&&t!="download"&&t!="rowSpan"&&t!="colSpan"&&t!="role"&&t!="popover"&&t in e)try{e[t]=r??"";break e}catch{}typeof r=="function"||(r==null||r===!1&&t[4]!="-"?e.removeAttribute(t):e.setAttribute(t,t=="popover"&&r==1?"":r))}}function ve(e){return function(t){if(this.l){var r=this.l[t.type+e];if(t.t==null)t.t=ie++;else if(t.t<r.u)return;return r(k.event?k.event(t):t)}}}function ue(e,t,r,o,s,n,a,c,l,u){var _,i,p,f,$,x,g,h,b,T,y,O,H,A,w,P,N,I=t.type;if(t.constructor!=null)return null;128&r.__u&&(l=!!(32&r.__u),n=[c=t.__e=r.__e]),(_=k.__b)&&_(t);e:if(typeof I=="function")try{if(h=t.props,b="prototype"in I&&I.prototype.render,T=(_=I.contextType)&&o[_.__c],y=_?T?T.props.value:_.__:o,r.__c?g=(i=t.__c=r.__c).__=i.__E:(b?t.__c=i=new I(h,y):(t.__c=i=new Q(h,y),i.constructor=I,i.render=st),T&&T.sub(i),i.props=h,i.state||(i.state={}),i.context=y,i.__n=o,p=i.__d=!0,i.__h=[],i._sb=[]),b&&i.__s==null&&(i.__s=i.state),b&&I.getDerivedStateFromProps!=null&&(i.__s==i.state&&(i.__s=R({},i.__s)),R(i.__s,I.getDerivedStateFromProps(h,i.__s))),f=i.props,$=i.state,i.__v=t,p)b&&I.getDerivedStateFromProps==null&&i.componentWillMount!=null&&i.componentWillMount(),b&&i.componentDidMount!=null&&i.__h.push(i.componentDidMount);else{if(b&&I.getDerivedStateFromProps==null&&h!==f&&i.componentWillReceiveProps!=null&&i.componentWillReceiveProps(h,y),!i.__e&&i.shouldComponentUpdate!=null&&i.shouldComponentUpdate(h,i.__s,y)===!1||t.__v==r.__v){for(t.__v!=r.__v&&(i.props=h,i.state=i.__s,i.__d=!1),t.__e=r.__e,t.__k=r.__k,t.__k.some(function(v){v&&(v.__=t)}),O=0;O<i._sb.length;O++)i.__h.push(i._sb[O]);i._sb=[],i.__h.length&&a.push(i);break e}i.componentWillUpdate!=null&&i.componentWillUpdate(h,i.__s,y),b&&i.componentDidUpdate!=null&&i.__h.push(function(){i.componentDidUpdate(f,$,x)})}if(i.context=y,i.props=h,i.__P=e,i.__e=!1,H=k.__r,A=0,b){for(i.state=i.__s,i.__d=!1,H&&H(t),_=i.render(i.props,i.state,i.context),w=0;w<i._sb.length;w++)i.__h.push(i._sb[w]);i._sb=[]}else do i.__d=!1,H&&H(t),_=i.render(i.props,i.state,i.context),i.state=i.__s;while(i.__d&&++A<25);i.state=i.__s,i.getChildContext!=null&&(o=R(R({},o),i.getChildContext())),b&&!p&&i.getSnapshotBeforeUpdate!=null&&(x=i.getSnapshotBeforeUpdate(f,$)),P=_,_!=null&&_.type===ee&&_.key==null&&(P=Ne(_.props.children)),c=Pe(e,Z(P)?P:[P],t,r,o,s,n,a,c,l,u),i.base=t.__e,t.__u&=-161,i.__h.length&&a.push(i),g&&(i.__E=i.__=null)}catch(v){if(t.__v=null,l||n!=null)if(v.then){for(t.__u|=l?160:128;c&&c.nodeType==8&&c.nextSibling;)c=c.nextSibling;n[n.indexOf(c)]=null,t.__e=c}else{for(N=n.length;N--;)le(n[N]);se(t)}else t.__e=r.__e,t.__k=r.__k,v.then||se(t);k.__e(v,t,r)}else n==null&&t.__v==r.__v?(t.__k=r.__k,t.__e=r.__e):c=t.__e=at(r.__e,t,r,o,s,n,a,l,u);return(_=k.diffed)&&_(t),128&t.__u?void 0:c}function se(e){e&&e.__c&&(e.__c.__e=!0),e&&e.__k&&e.__k.forEach(se)}function Te(e,t,r){for(var o=0;o<r.length;o++)de(r[o],r[++o],r[++o]);k.__c&&k.__c(t,e),e.some(function(s){try{e=s.__h,s.__h=[],e.some(function(n){n.call(s)})}catch(n){k.__e(n,s.__v)}})}function Ne(e){return typeof e!="object"||e==null||e.__b&&e.__b>0?e:Z(e)?e.map(Ne):R({},e)}function at(e,t,r,o,s,n,a,c,l){var u,_,i,p,f,$,x,g=r.props,h=t.props,b=t.type;if(b=="svg"?s="http://www.w3.org/2000/svg":b=="math"?s="http://www.w3.org/1998/Math/MathML":s||(s="http://www.w3.org/1999/xhtml"),n!=null){for(u=0;u<n.length;u++)if((f=n[u])&&"setAttribute"in f==!!b&&(b?f.localName==b:f.nodeType==3)){e=f,n[u]=null;break}}if(e==null){if(b==null)return document.createTextNode(h);e=document.createElementNS(s,b,h.is&&h),c&&(k.__m&&k.__m(t,n),c=!1),n=null}if(b==null)g===h||c&&e.data==h||(e.data=h);else{if(n=n&&Y.call(e.childNodes),g=r.props||V,!c&&n!=null)for(g={},u=0;u<e.attributes.length;u++)g[(f=e.attributes[u]).name]=f.value;for(u in g)if(f=g[u],u!="children"){if(u=="dangerouslySetInnerHTML")i=f;else if(!(u in h)){if(u=="value"&&"defaultValue"in h||u=="checked"&&"defaultChecked"in h)continue;q(e,u,null,f,s)}}for(u in h)f=h[u],u=="children"?p=f:u=="dangerouslySetInnerHTML"?_=f:u=="value"?$=f:u=="checked"?x=f:c&&typeof f!="function"||g[u]===f||q(e,u,f,g[u],s);if(_)c||i&&(_.__html==i.__html||_.__html==e.innerHTML)||(e.innerHTML=_.__html),t.__k=[];else if(i&&(e.innerHTML=""),Pe(t.type=="template"?e.content:e,Z(p)?p:[p],t,r,o,b=="foreignObject"?"http://www.w3.org/1999/xhtml":s,n,a,n?n[0]:r.__k&&j(r,0),c,l),n!=null)for(u=n.length;u--;)le(n[u]);c||(u="value",b=="progress"&&$==null?e.removeAttribute("value"):$!=null&&($!==e[u]||b=="progress"&&!$||b=="option"&&$!=g[u])&&q(e,u,$,g[u],s),u="checked",x!=null&&x!=e[u]&&q(e,u,x,g[u],s))}return e}function de(e,t,r){try{if(typeof e=="function"){var o=typeof e.__u=="function";o&&e.__u(),o&&t==null||(e.__u=e(t))}else e.current=t}catch(s){k.__e(s,r)}}function De(e,t,r){var o,s;if(k.unmount&&k.unmount(e),(o=e.ref)&&(o.current&&o.current!=e.__e||de(o,null,t)),(o=e.__c)!=null){if(o.componentWillUnmount)try{o.componentWillUnmount()}catch(n){k.__e(n,t)}o.base=o.__P=null}if(o=e.__k)for(s=0;s<o.length;s++)o[s]&&De(o[s],t,r||typeof e.type!="function");r||le(e.__e),e.__c=e.__=e.__e=void 0}function st(e,t,r){return this.constructor(e,r)}function Ie(e,t,r){var o,s,n,a;t==document&&(t=document.documentElement),k.__&&k.__(e,t),s=(o=typeof r=="function")?null:r&&r.__k||t.__k,n=[],a=[],ue(t,e=(!o&&r||t).__k=ce(ee,null,[e]),s||V,V,t.namespaceURI,!o&&r?[r]:s?null:t.firstChild?Y.call(t.childNodes):null,n,!o&&r?r:s?s.__e:t.firstChild,o,a),Te(n,e,a)}Y=Ce.slice,k={__e:function(e,t,r,o){for(var s,n,a;t=t.__;)if((s=t.__c)&&!s.__)try{if((n=s.constructor)&&n.getDerivedStateFromError!=null&&(s.setState(n.getDerivedStateFromError(e)),a=s.__d),s.componentDidCatch!=null&&(s.componentDidCatch(e,o||{}),a=s.__d),a)return s.__E=s}catch(c){e=c}throw e}},ye=0,et=function(e){return e!=null&&e.constructor==null},Q.prototype.setState=function(e,t){var r;r=this.__s!=null&&this.__s!=this.state?this.__s:this.__s=R({},this.state),typeof e=="function"&&(e=e(R({},r),this.props)),e&&R(r,e),e!=null&&this.__v&&(t&&this._sb.push(t),be(this))},Q.prototype.forceUpdate=function(e){this.__v&&(this.__e=!0,e&&this.__h.push(e),be(this))},Q.prototype.render=ee,W=[],we=typeof Promise=="function"?Promise.prototype.then.bind(Promise.resolve()):setTimeout,xe=function(e,t){return e.__v.__b-t.__v.__b},X.__r=0,ke=/(PointerCapture)$|Capture$/i,ie=0,ne=ve(!1),ae=ve(!0),tt=0;var G,S,pe,Le,re=0,Ue=[],E=k,He=E.__b,Ae=E.__r,Me=E.diffed,Oe=E.__c,Re=E.unmount,Be=E.__;function fe(e,t){E.__h&&E.__h(S,e,re||t),re=0;var r=S.__H||(S.__H={__:[],__h:[]});return e>=r.__.length&&r.__.push({}),r.__[e]}function m(e){return re=1,it(ze,e)}function it(e,t,r){var o=fe(G++,2);if(o.t=e,!o.__c&&(o.__=[r?r(t):ze(void 0,t),function(c){var l=o.__N?o.__N[0]:o.__[0],u=o.t(l,c);l!==u&&(o.__N=[u,o.__[1]],o.__c.setState({}))}],o.__c=S,!S.__f)){var s=function(c,l,u){if(!o.__c.__H)return!0;var _=o.__c.__H.__.filter(function(p){return!!p.__c});if(_.every(function(p){return!p.__N}))return!n||n.call(this,c,l,u);var i=o.__c.props!==c;return _.forEach(function(p){if(p.__N){var f=p.__[0];p.__=p.__N,p.__N=void 0,f!==p.__[0]&&(i=!0)}}),n&&n.call(this,c,l,u)||i};S.__f=!0;var n=S.shouldComponentUpdate,a=S.componentWillUpdate;S.componentWillUpdate=function(c,l,u){if(this.__e){var _=n;n=void 0,s(c,l,u),n=_}a&&a.call(this,c,l,u)},S.shouldComponentUpdate=s}return o.__N||o.__}function K(e,t){var r=fe(G++,3);!E.__s&&je(r.__H,t)&&(r.__=e,r.u=t,S.__H.__h.push(r))}function lt(e,t){var r=fe(G++,7);return je(r.__H,t)&&(r.__=e(),r.__H=t,r.__h=e),r.__}function We(e,t){return re=8,lt(function(){return e},t)}function ct(){for(var e;e=Ue.shift();)if(e.__P&&e.__H)try{e.__H.__h.forEach(te),e.__H.__h.forEach(_e),e.__H.__h=[]}catch(t){e.__H.__h=[],E.__e(t,e.__v)}}E.__b=function(e){S=null,He&&He(e)},E.__=function(e,t){e&&t.__k&&t.__k.__m&&(e.__m=t.__k.__m),Be&&Be(e,t)},E.__r=function(e){Ae&&Ae(e),G=0;var t=(S=e.__c).__H;t&&(pe===S?(t.__h=[],S.__h=[],t.__.forEach(function(r){r.__N&&(r.__=r.__N),r.u=r.__N=void 0})):(t.__h.forEach(te),t.__h.forEach(_e),t.__h=[],G=0)),pe=S},E.diffed=function(e){Me&&Me(e);var t=e.__c;t&&t.__H&&(t.__H.__h.length&&(Ue.push(t)!==1&&Le===E.requestAnimationFrame||((Le=E.requestAnimationFrame)||ut)(ct)),t.__H.__.forEach(function(r){r.u&&(r.__H=r.u),r.u=void 0})),pe=S=null},E.__c=function(e,t){t.some(function(r){try{r.__h.forEach(te),r.__h=r.__h.filter(function(o){return!o.__||_e(o)})}catch(o){t.some(function(s){s.__h&&(s.__h=[])}),t=[],E.__e(o,r.__v)}}),Oe&&Oe(e,t)},E.unmount=function(e){Re&&Re(e);var t,r=e.__c;r&&r.__H&&(r.__H.__.forEach(function(o){try{te(o)}catch(s){t=s}}),r.__H=void 0,t&&E.__e(t,r.__v))};var Fe=typeof requestAnimationFrame=="function";function ut(e){var t,r=function(){clearTimeout(o),Fe&&cancelAnimationFrame(t),setTimeout(e)},o=setTimeout(r,35);Fe&&(t=requestAnimationFrame(r))}function te(e){var t=S,r=e.__c;typeof r=="function"&&(e.__c=void 0,r()),S=t}function _e(e){var t=S;e.__c=e.__(),S=t}function je(e,t){return!e||e.length!==t.length||t.some(function(r,o){return r!==e[o]})}function ze(e,t){return typeof t=="function"?t(e):t}var Ge=function(e,t,r,o){var s;t[0]=0;for(var n=1;n<t.length;n++){var a=t[n++],c=t[n]?(t[0]|=a?1:2,r[t[n++]]):t[++n];a===3?o[0]=c:a===4?o[1]=Object.assign(o[1]||{},c):a===5?(o[1]=o[1]||{})[t[++n]]=c:a===6?o[1][t[++n]]+=c+"":a?(s=e.apply(c,Ge(e,c,r,["",null])),o.push(s),c[0]?t[0]|=2:(t[n-2]=0,t[n]=s)):o.push(c)}return o},Ve=new Map;function Ke(e){var t=Ve.get(this);return t||(t=new Map,Ve.set(this,t)),(t=Ge(this,t.get(e)||(t.set(e,t=(function(r){for(var o,s,n=1,a="",c="",l=[0],u=function(p){n===1&&(p||(a=a.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?l.push(0,p,a):n===3&&(p||a)?(l.push(3,p,a),n=2):n===2&&a==="..."&&p?l.push(4,p,0):n===2&&a&&!p?l.push(5,0,!0,a):n>=5&&((a||!p&&n===5)&&(l.push(n,0,a,s),n=6),p&&(l.push(n,p,0,s),n=6)),a=""},_=0;_<r.length;_++){_&&(n===1&&u(),u(_));for(var i=0;i<r[_].length;i++)o=r[_][i],n===1?o==="<"?(u(),l=[l],n=3):a+=o:n===4?a==="--"&&o===">"?(n=1,a=""):a=o+a[0]:c?o===c?c="":a+=o:o==='"'||o==="'"?c=o:o===">"?(u(),n=1):n&&(o==="="?(n=5,s=a,a=""):o==="/"&&(n<5||r[_][i+1]===">")?(u(),n===3&&(l=l[0]),n=l,(l=l[0]).push(2,0,n),n=0):o===" "||o==="	"||o===`
`||o==="\r"?(u(),n=2):a+=o),n===3&&a==="!--"&&(n=4,l=l[0])}return u(),l})(e)),t),arguments,[])).length>1?t:t[0]}var d=Ke.bind(ce),dt=5e3;async function L(e,t,r){let o={method:e,headers:{}};e!=="GET"&&(o.headers["X-Strata-Console"]="1"),r!==void 0&&(o.headers["Content-Type"]="application/json",o.body=JSON.stringify(r));let s=await fetch("/api/v1"+t,o);if(s.status===204)return null;let n=null;try{n=await s.json()}catch{}if(!s.ok){let a=n&&n.error?n.error:s.status+" "+s.statusText,c=new Error(a);throw c.code=n&&n.code,c.configErrors=n&&n.configErrors,c}return n}function M(e,t=!0){let[r,o]=m({data:null,error:null}),s=We(()=>{e&&L("GET",e).then(n=>o({data:n,error:null}),n=>o(a=>({data:a.data,error:n})))},[e]);return K(()=>{if(o({data:null,error:null}),s(),!t)return;let n=setInterval(s,dt);return()=>clearInterval(n)},[s,t]),[r.data,r.error,s]}function qe(){let[e,t]=m(location.hash);return K(()=>{let r=()=>t(location.hash);return addEventListener("hashchange",r),()=>removeEventListener("hashchange",r)},[]),(e.replace(/^#/,"")||"/").split("/").filter(Boolean).map(decodeURIComponent)}var C=encodeURIComponent;function B({error:e}){return e?d`<p class="error" role="alert">${e.message}${e.code?d` <code>${e.code}</code>`:""}</p>`:null}function F({data:e,error:t}){return e?null:t?d`<${B} error=${t} />`:d`<p class="muted">Loading…</p>`}function D({label:e,value:t,warn:r}){return d`<div class=${"stat"+(r?" warn":"")}><span class="stat-value">${t}</span><span class="stat-label">${e}</span></div>`}function z(e,t){let r=[];for(let o of e.split(`
`)){if(!o.trim())continue;let s=o.indexOf(t);if(s<1)throw new Error(`"${o}" is not key${t}value`);r.push([o.slice(0,s).trim(),o.slice(s+1).trim()])}return r}function oe({what:e,name:t,onDelete:r}){let[o,s]=m(!1),[n,a]=m(""),[c,l]=m(null);return o?d`<form class="card danger-zone" onSubmit=${async _=>{_.preventDefault();try{await r()}catch(i){l(i)}}}>
    <label><span>Type <code>${t}</code> to delete this ${e}</span><input value=${n} onInput=${_=>a(_.target.value)} /></label>
    <${B} error=${c} />
    <button type="submit" class="danger" disabled=${n!==t}>Delete ${e} ${t}</button>
    <button type="button" onClick=${()=>s(!1)}>Cancel</button>
  </form>`:d`<button type="button" class="danger" onClick=${()=>s(!0)}>Delete ${e}…</button>`}function Je(e){if(e===void 0||e<0)return"—";let t=["B","KiB","MiB","GiB","TiB"],r=e,o=0;for(;r>=1024&&o<t.length-1;)r/=1024,o++;return(o===0?r:r.toFixed(1))+" "+t[o]}function pt({topic:e,draft:t,setDraft:r,onApplied:o}){let[s,n]=m(""),[a,c]=m(null),[l,u]=m(null),[_,i]=m(null),[p,f]=m(!1),$=()=>({set:Object.fromEntries(z(t,"=")),delete:s.split(/[\s,]+/).filter(Boolean)}),x=t+`
--
`+s,g=async h=>{u(null),i(null),f(!0);try{let b=await L("PATCH","/topics/"+C(e)+"/configs",{...$(),validateOnly:h});h?(c(x),i(`Valid: ${b.changed.join(", ")}. Apply to change them.`)):(c(null),i(`Applied: ${b.changed.join(", ")}.`),r(""),n(""),o())}catch(b){c(null),u(b)}finally{f(!1)}};return d`<form class="card" aria-labelledby="edit-configs" onSubmit=${h=>{h.preventDefault(),g(!0)}}>
    <h2 id="edit-configs">Edit configs</h2>
    <label><span>Set (one <code>name=value</code> per line; <em>Edit</em> in the table copies a config here)</span>
      <textarea id="config-set" rows="3" value=${t} onInput=${h=>{r(h.target.value),c(null)}} placeholder="retention.ms=86400000"></textarea></label>
    <label><span>Delete (back to the default; names separated by spaces or commas)</span>
      <input id="config-delete" value=${s} onInput=${h=>{n(h.target.value),c(null)}} /></label>
    ${l&&d`<div class="error" role="alert" id="config-error">${l.message}
      ${l.configErrors&&l.configErrors.length>0&&d`<ul>${l.configErrors.map(h=>d`<li><code>${h.name}</code>: ${h.error}</li>`)}</ul>`}</div>`}
    ${_&&d`<p class="ok" role="status" id="config-result">${_}</p>`}
    <button id="config-validate" type="submit" disabled=${p}>Validate</button>
    <button id="config-apply" type="button" class="apply" disabled=${p||a!==x} onClick=${()=>g(!1)}>Apply</button>
  </form>`}function Qe({name:e}){let[t,r,o]=M("/topics/"+C(e)),[s,n]=m(""),a=async()=>{await L("DELETE","/topics/"+C(e)),location.hash="#/topics"},c=l=>n(u=>(u&&!u.endsWith(`
`)?u+`
`:u)+`${l.name}=${l.value??""}`);return d`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <h1>${e}</h1>
    <${F} data=${t} error=${r} />
    ${t&&d`
      <p><a class="button" href=${"#/topics/"+C(e)+"/messages"}>Browse messages</a></p>
      <h2>Partitions</h2>
      <div class="scroll"><table>
        <thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Log start</th><th>High watermark</th><th>Records</th><th>Local size</th><th>In the bucket</th></tr></thead>
        <tbody>${t.partitions.map(l=>d`<tr key=${l.partition} class=${l.isr.length<l.replicas.length?"warn":""}>
          <td>${l.partition}</td><td>${l.leader<0?"none":l.leader}</td><td>${l.replicas.join(", ")}</td><td>${l.isr.join(", ")}</td>
          <td>${l.logStartOffset}</td><td>${l.highWatermark}</td><td>${Math.max(0,l.highWatermark-l.logStartOffset)}</td>
          <td>${Je(l.localBytes)}</td><td>${Je(l.remoteBytes)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Configs</h2>
      <div class="scroll"><table id="topic-configs">
        <thead><tr><th>Name</th><th>Value</th><th>Source</th><th></th></tr></thead>
        <tbody>${t.configs.map(l=>d`<tr key=${l.name} class=${l.source==="DYNAMIC_TOPIC_CONFIG"?"set":""}>
          <td>${l.name}</td><td class="wrap">${l.sensitive?"(sensitive)":l.value??"—"}</td><td>${l.source}</td>
          <td>${!l.sensitive&&d`<button type="button" class="small" aria-label=${"Edit "+l.name} onClick=${()=>c(l)}>Edit</button>`}</td></tr>`)}</tbody>
      </table></div>
      <${pt} topic=${e} draft=${s} setDraft=${n} onApplied=${o} />
      ${!t.internal&&d`<${oe} what="topic" name=${e} onDelete=${a} />`}`}
  </section>`}function _t(e){return e.encoding==="base64"?Uint8Array.from(atob(e.data),t=>t.charCodeAt(0)):new TextEncoder().encode(e.data)}function ft(e){let t=[];for(let r=0;r<e.length;r+=16){let o=e.slice(r,r+16),s=[...o].map(a=>a.toString(16).padStart(2,"0")).join(" "),n=[...o].map(a=>a>=32&&a<127?String.fromCharCode(a):".").join("");t.push(r.toString(16).padStart(8,"0")+"  "+s.padEnd(47)+"  |"+n+"|")}return t.join(`
`)}function he(e,t){return e==null?d`<span class="muted">null</span>`:t==="hex"?d`<pre class="hex">${ft(_t(e))}</pre>`:e.encoding==="base64"?d`<span class="badge">base64</span> ${e.data}`:t==="json"&&e.json?d`<pre>${JSON.stringify(JSON.parse(e.data),null,2)}</pre>`:e.data}function ht({topic:e,partitions:t,onProduced:r}){let[o,s]=m(""),[n,a]=m(""),[c,l]=m(""),[u,_]=m(""),[i,p]=m(null),[f,$]=m(null);return d`<form class="card" onSubmit=${async g=>{g.preventDefault(),$(null),p(null);try{let h={key:n===""?null:{data:n},value:{data:c},headers:z(u,":").map(([T,y])=>({key:T,value:{data:y}}))};o!==""&&(h.partition=Number(o));let b=await L("POST","/topics/"+C(e)+"/records",h);p(b),r(b)}catch(h){$(h)}}} aria-labelledby="produce">
    <h2 id="produce">Produce a record</h2>
    <div class="fields">
      <label>Partition<select id="produce-partition" value=${o} onChange=${g=>s(g.target.value)}>
        <option value="">by key</option>
        ${Array.from({length:t},(g,h)=>d`<option value=${h}>${h}</option>`)}
      </select></label>
      <label>Key<input id="produce-key" value=${n} onInput=${g=>a(g.target.value)} placeholder="(none)" /></label>
    </div>
    <label>Value<textarea id="produce-value" rows="3" value=${c} onInput=${g=>l(g.target.value)}></textarea></label>
    <label><span>Headers (one <code>name: value</code> per line)</span><textarea rows="2" value=${u} onInput=${g=>_(g.target.value)}></textarea></label>
    <${B} error=${f} />
    ${i&&d`<p class="ok" role="status" id="produce-result">Produced to partition ${i.partition} at offset ${i.offset}.</p>`}
    <button id="produce-submit" type="submit">Produce</button>
  </form>`}function Xe({topic:e}){let[t]=M("/topics/"+C(e),!1),[r,o]=m("0"),[s,n]=m("start"),[a,c]=m("0"),[l,u]=m(""),[_,i]=m("50"),[p,f]=m("text"),[$,x]=m(""),[g,h]=m(""),[b,T]=m(null),[y,O]=m(null),[H,A]=m(null),w=()=>{let v=`?partition=${r}&limit=${_}`;return s==="offset"&&(v+="&offset="+C(a)),s==="time"&&(v+="&timestamp="+(l?new Date(l).getTime():0)),s==="end"&&(v+="&fromEnd=true"),v+P()},P=()=>($?"&key="+C($):"")+(g.trim()?"&filter="+C(g):""),N=v=>{T(v),L("GET","/topics/"+C(e)+"/records"+v).then(U=>{O(U),A(null)},A)};K(()=>{N(w())},[e]);let I=y&&y.nextOffset<y.highWatermark;return d`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> / <a href=${"#/topics/"+C(e)}>${e}</a> /</p>
    <h1>Messages</h1>
    <form class="card" onSubmit=${v=>{v.preventDefault(),N(w())}}>
      <div class="fields">
        <label>Partition<select id="browse-partition" value=${r} onChange=${v=>o(v.target.value)}>
          ${Array.from({length:t?t.partitions.length:1},(v,U)=>d`<option value=${U}>${U}</option>`)}
        </select></label>
        <label>From<select id="browse-from" value=${s} onChange=${v=>n(v.target.value)}>
          <option value="start">the log start</option><option value="offset">an offset</option>
          <option value="time">a time</option><option value="end">the end</option>
        </select></label>
        ${s==="offset"&&d`<label>Offset<input type="number" min="0" value=${a} onInput=${v=>c(v.target.value)} /></label>`}
        ${s==="time"&&d`<label>Time<input type="datetime-local" value=${l} onInput=${v=>u(v.target.value)} /></label>`}
        <label>Limit<input type="number" min="1" max="500" value=${_} onInput=${v=>i(v.target.value)} /></label>
        <label>Decode as<select id="browse-decode" value=${p} onChange=${v=>f(v.target.value)}>
          <option value="text">text</option><option value="json">JSON (pretty)</option><option value="hex">hex</option>
        </select></label>
      </div>
      <div class="fields">
        <label>Key contains<input id="browse-key" value=${$} onInput=${v=>x(v.target.value)} /></label>
        <label class="grow"><span>Filter (expression over <code>value</code>, <code>key</code>, <code>headers</code>, <code>offset</code>, <code>timestamp</code>)</span>
          <input id="browse-filter" value=${g} onInput=${v=>h(v.target.value)} placeholder='value.amount > 100 && headers.source == "web"' /></label>
      </div>
      <button type="submit" id="browse-submit">Load</button>
      ${b&&d` <button type="button" onClick=${()=>N(b)}>Refresh</button>`}
    </form>
    <${B} error=${H} />
    ${y&&d`
      <p class="muted" id="browse-summary">Partition ${y.partition}: offsets ${y.logStartOffset} to ${y.highWatermark-1}; showing ${y.records.length} from ${y.startOffset}${y.scanned!==y.records.length?d`, ${y.scanned} examined`:""}.
        ${y.stoppedBy&&d` The scan stopped at its ${y.stoppedBy==="time"?"time":"record"} limit; continue with Next records.`}
        ${y.filterErrors>0&&d` The filter failed on ${y.filterErrors} records (${y.filterError}).`}</p>
      <div class="scroll"><table class="records">
        <thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${y.records.map(v=>d`<tr key=${v.offset}>
          <td>${v.offset}</td><td>${new Date(v.timestamp).toISOString()}</td>
          <td class="wrap">${he(v.key,p)}</td><td class="wrap value">${he(v.value,p)}</td>
          <td class="wrap">${v.headers.map(U=>d`<div><b>${U.key}</b>: ${he(U.value,p)}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${y.records.length===0&&d`<p class="muted">No records ${y.scanned>0?"match":"there"}.</p>`}
      ${I&&d`<button type="button" onClick=${()=>N(`?partition=${y.partition}&limit=${_}&offset=${y.nextOffset}`+P())}>Next records</button>`}`}
    ${t&&d`<${ht} topic=${e} partitions=${t.partitions.length} onProduced=${()=>b&&N(b)} />`}
  </section>`}function Ye(){let[e,t]=M("/groups");return d`<section>
    <h1>Consumer groups</h1>
    <${F} data=${e} error=${t} />
    ${e&&d`
      <div class="scroll"><table>
        <thead><tr><th>Group</th><th>State</th><th>Protocol</th><th>Coordinator</th></tr></thead>
        <tbody>${e.groups.map(r=>d`<tr key=${r.group}>
          <td><a href=${"#/groups/"+C(r.group)}>${r.group}</a></td><td>${r.state}</td><td>${r.protocolType||"—"}</td><td>${r.coordinator}</td></tr>`)}</tbody>
      </table></div>
      ${e.groups.length===0&&d`<p class="muted">No groups.</p>`}`}
  </section>`}function me(e){return e===void 0||e<0?"—":e<60?e.toFixed(e<10?1:0)+" s":e<3600?Math.floor(e/60)+" min "+Math.round(e%60)+" s":Math.floor(e/3600)+" h "+Math.round(e%3600/60)+" min"}var mt={OK:"status-ok",WARN:"status-warn",STOP:"status-err",STALL:"status-err",REWIND:"status-err"};function gt({status:e}){return e?d`<span class=${"badge "+(mt[e]||"")}>${e}</span>`:d`<span class="muted">—</span>`}function bt({points:e}){if(!e||e.length===0)return d`<p class="muted">No measurements yet.</p>`;let s=Math.max(Date.now(),e[e.length-1].t),n=Math.max(s-3600*1e3,Math.min(e[0].t,s-300*1e3)),a=Math.max(1,...e.map(p=>p.records)),c=p=>28+(Math.max(p,n)-n)/(s-n)*568,l=p=>6+(1-p/a)*116,u=e.map(p=>`${c(p.t).toFixed(1)},${l(p.records).toFixed(1)}`).join(" "),_=e[e.length-1],i=`Total lag over the last hour: ${e.length} measurements, now ${_.records} records, at most ${a}`;return d`<figure class="chart">
    <svg id="lag-chart" viewBox=${"0 0 600 140"} role="img" aria-label=${i}>
      <title>${i}</title>
      <line x1=${28} y1=${l(0)} x2=${596} y2=${l(0)} class="axis" />
      <line x1=${28} y1=${l(a)} x2=${596} y2=${l(a)} class="grid" />
      <text x="2" y=${l(a)+4} class="tick">${a}</text>
      <text x="2" y=${l(0)+4} class="tick">0</text>
      <text x=${28} y=${138} class="tick">−${Math.round((s-n)/6e4)} min</text>
      <text x=${596} y=${138} class="tick" text-anchor="end">now</text>
      ${e.length>1?d`<polyline points=${u} class="lag-line" />`:""}
      ${e.map(p=>d`<circle cx=${c(p.t)} cy=${l(p.records)} r="2.5" class="lag-dot"><title>${new Date(p.t).toLocaleTimeString()}: ${p.records} records${p.seconds>=0?", "+me(p.seconds):""}</title></circle>`)}
    </svg>
    <figcaption class="muted">Total lag in records over the last hour at most (sampled every 30 s, and whenever this page refreshes).</figcaption>
  </figure>`}function $t({group:e,topics:t,active:r,onApplied:o}){let[s,n]=m("earliest"),[a,c]=m(""),[l,u]=m("0"),[_,i]=m(""),[p,f]=m(null),[$,x]=m(null),[g,h]=m(null),[b,T]=m(!1),y=w=>{let P={to:s,dryRun:w};return a&&(P.topics=[a]),s==="offset"&&(P.offset=Number(l)),s==="timestamp"&&(P.timestamp=_?new Date(_).getTime():0),P},O=JSON.stringify(y(!0)),H=async w=>{h(null),x(null),T(!0);try{if(s==="offset"&&!(Number.isInteger(Number(l))&&Number(l)>=0))throw new Error("The offset must be a whole number of at least 0.");if(s==="timestamp"&&!_)throw new Error("Choose a time.");let P=await L("POST","/groups/"+C(e)+"/reset-offsets",y(w));w?f({key:O,offsets:P.offsets}):(f(null),x(P.applied?`Committed ${P.offsets.length} offsets.`:"Some offsets were not committed: "+P.offsets.filter(N=>N.error).map(N=>`${N.topic}/${N.partition}: ${N.error}`).join("; ")),o())}catch(P){h(P)}finally{T(!1)}},A=()=>f(null);return d`<form class="card" aria-labelledby="reset-offsets" onSubmit=${w=>{w.preventDefault(),H(!0)}}>
    <h2 id="reset-offsets">Reset offsets</h2>
    ${r&&d`<p class="muted">The group has members: Kafka moves only an inactive group's offsets, so stop its consumers first.</p>`}
    <div class="fields">
      <label>To<select id="reset-to" value=${s} onChange=${w=>{n(w.target.value),A()}}>
        <option value="earliest">the earliest offset</option><option value="latest">the latest offset</option>
        <option value="timestamp">a time</option><option value="offset">an offset</option>
      </select></label>
      <label>Topic<select id="reset-topic" value=${a} onChange=${w=>{c(w.target.value),A()}}>
        <option value="">all of the group's</option>
        ${t.map(w=>d`<option value=${w}>${w}</option>`)}
      </select></label>
      ${s==="offset"&&d`<label>Offset<input id="reset-offset" type="number" min="0" value=${l} onInput=${w=>{u(w.target.value),A()}} /></label>`}
      ${s==="timestamp"&&d`<label>Time<input id="reset-time" type="datetime-local" value=${_} onInput=${w=>{i(w.target.value),A()}} /></label>`}
    </div>
    <${B} error=${g} />
    ${p&&d`<div class="scroll"><table id="reset-preview">
      <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>New offset</th><th></th></tr></thead>
      <tbody>${p.offsets.map(w=>d`<tr key=${w.topic+"/"+w.partition}>
        <td>${w.topic}</td><td>${w.partition}</td><td>${w.currentOffset<0?"—":w.currentOffset}</td><td>${w.newOffset}</td><td class="wrap">${w.error||""}</td></tr>`)}</tbody>
    </table></div>`}
    ${$&&d`<p class="ok" role="status" id="reset-result">${$}</p>`}
    <button id="reset-preview-submit" type="submit" disabled=${b}>Dry run</button>
    <button id="reset-apply" type="button" class="apply" disabled=${b||!p||p.key!==O} onClick=${()=>H(!1)}>Apply these offsets</button>
  </form>`}function Ze({name:e}){let[t,r,o]=M("/groups/"+C(e)),s=async()=>{await L("DELETE","/groups/"+C(e)),location.hash="#/groups"},n=t?[...new Set(t.offsets.map(a=>a.topic))].sort():[];return d`<section>
    <p class="crumbs"><a href="#/groups">Consumer groups</a> /</p>
    <h1>${e}</h1>
    <${F} data=${t} error=${r} />
    ${t&&d`
      <div class="stats">
        <${D} label="State" value=${t.state} />
        <${D} label="Members" value=${t.members.length} />
        <${D} label="Total lag" value=${d`<span id="group-total-lag">${t.totalLag}</span>`} warn=${t.totalLag>0} />
        <${D} label="Lag in seconds" value=${me(t.maxLagSeconds)} warn=${t.maxLagSeconds>60} />
        <${D} label="Status" value=${d`<span id="group-status">${t.status||"—"}</span>`} warn=${t.severity==="WARN"||t.severity==="ERR"} />
        <${D} label="Coordinator" value=${t.coordinator} />
      </div>
      <h2>Lag over the last hour</h2>
      <${bt} points=${t.history} />
      <h2>Lag per partition</h2>
      <div class="scroll"><table id="group-lag">
        <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>Log end</th><th>Lag</th><th>Lag (time)</th><th>Status</th><th>Member</th></tr></thead>
        <tbody>${t.offsets.map(a=>d`<tr key=${a.topic+"/"+a.partition}>
          <td><a href=${"#/topics/"+C(a.topic)}>${a.topic}</a></td><td>${a.partition}</td>
          <td>${a.committedOffset<0?"—":a.committedOffset}</td><td>${a.logEndOffset}</td>
          <td class=${a.lag>0?"lag":""}>${a.lag<0?"?":a.lag}</td><td>${me(a.lagSeconds)}</td>
          <td><${gt} status=${a.status} /></td><td class="wrap">${a.memberId||"—"}</td></tr>`)}</tbody>
      </table></div>
      <h2>Members</h2>
      <div class="scroll"><table>
        <thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Assigned</th></tr></thead>
        <tbody>${t.members.map(a=>d`<tr key=${a.memberId}>
          <td class="wrap">${a.memberId}</td><td>${a.clientId}</td><td>${a.clientHost}</td>
          <td>${a.assigned.map(c=>d`<div>${c.topic}: ${c.partitions.join(", ")}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${t.members.length===0&&d`<p class="muted">No members.</p>`}
      <${$t} group=${e} topics=${n} active=${t.members.length>0} onApplied=${o} />
      <${oe} what="group" name=${e} onDelete=${s} />`}
  </section>`}function vt(){let[e,t]=M("/cluster");return d`<section>
    <h1>Cluster</h1>
    <${F} data=${e} error=${t} />
    ${e&&d`
      <p class="muted">Cluster id <code>${e.clusterId}</code> · served by node ${e.node}</p>
      <div class="stats">
        <${D} label="Brokers" value=${e.brokers.length} />
        <${D} label="Controller" value=${e.controller} />
        <${D} label="Topics" value=${e.topics} />
        <${D} label="Partitions" value=${e.partitions} />
        <${D} label="Under-replicated" value=${e.underReplicatedPartitions} warn=${e.underReplicatedPartitions>0} />
        <${D} label="Offline" value=${e.offlinePartitions} warn=${e.offlinePartitions>0} />
      </div>
      <h2>Brokers</h2>
      <div class="scroll"><table>
        <thead><tr><th>Node</th><th>Address</th><th>Rack</th><th>Role</th></tr></thead>
        <tbody>${e.brokers.map(r=>d`<tr key=${r.nodeId}>
          <td>${r.nodeId}</td><td>${r.host}:${r.port}</td><td>${r.rack||"—"}</td>
          <td>${r.nodeId===e.controller?"controller":"broker"}</td></tr>`)}</tbody>
      </table></div>`}
  </section>`}var yt=/^[a-zA-Z0-9._-]{1,249}$/;function wt({onCreated:e}){let[t,r]=m(""),[o,s]=m("1"),[n,a]=m("1"),[c,l]=m(""),[u,_]=m(null),[i,p]=m(!1);return d`<form class="card" onSubmit=${async $=>{$.preventDefault(),_(null);try{if(!yt.test(t)||t==="."||t==="..")throw new Error('Topic names use 1 to 249 of: letters, digits, ".", "_", "-".');let x=Number(o),g=Number(n);if(!Number.isInteger(x)||x<1)throw new Error("Partitions must be a whole number of at least 1.");if(!Number.isInteger(g)||g<1)throw new Error("Replication factor must be a whole number of at least 1.");let h=Object.fromEntries(z(c,"="));p(!0),await L("POST","/topics",{name:t,partitions:x,replicationFactor:g,configs:h}),r(""),e(t)}catch(x){_(x)}finally{p(!1)}}} aria-labelledby="create-topic">
    <h2 id="create-topic">Create a topic</h2>
    <div class="fields">
      <label>Name<input id="new-topic-name" value=${t} onInput=${$=>r($.target.value)} required /></label>
      <label>Partitions<input id="new-topic-partitions" type="number" min="1" value=${o} onInput=${$=>s($.target.value)} /></label>
      <label>Replication factor<input id="new-topic-rf" type="number" min="1" value=${n} onInput=${$=>a($.target.value)} /></label>
    </div>
    <label><span>Configs (one <code>name=value</code> per line)</span><textarea rows="2" value=${c} onInput=${$=>l($.target.value)} placeholder="retention.ms=86400000"></textarea></label>
    <${B} error=${u} />
    <button id="create-topic-submit" type="submit" disabled=${i}>Create topic</button>
  </form>`}function xt(){let[e,t]=m(""),[r,o]=m(1),[s,n]=m(null),a=25,[c,l,u]=M(`/topics?search=${C(e)}&page=${r}&pageSize=${a}`),_=c?Math.max(1,Math.ceil(c.total/a)):1;return d`<section>
    <h1>Topics</h1>
    <div class="toolbar">
      <label class="search">Search<input type="search" id="topic-search" value=${e}
        onInput=${i=>{t(i.target.value),o(1)}} placeholder="name contains…" /></label>
    </div>
    <${F} data=${c} error=${l} />
    ${c&&d`
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Partitions</th><th>Replication</th><th></th></tr></thead>
        <tbody>${c.topics.map(i=>d`<tr key=${i.name}>
          <td><a href=${"#/topics/"+C(i.name)}>${i.name}</a>${i.internal?d` <span class="badge">internal</span>`:""}</td>
          <td>${i.partitions}</td><td>${i.replicationFactor}</td>
          <td><a href=${"#/topics/"+C(i.name)+"/messages"}>Messages</a></td></tr>`)}</tbody>
      </table></div>
      ${c.topics.length===0&&d`<p class="muted">No topics${e?" match":""}.</p>`}
      <nav class="pager" aria-label="Topic pages">
        <button type="button" disabled=${r<=1} onClick=${()=>o(r-1)}>Previous</button>
        <span>Page ${r} of ${_} · ${c.total} topics</span>
        <button type="button" disabled=${r>=_} onClick=${()=>o(r+1)}>Next</button>
      </nav>`}
    ${s&&d`<p class="ok" role="status">Created <a href=${"#/topics/"+C(s)}>${s}</a>.</p>`}
    <${wt} onCreated=${i=>{n(i),u()}} />
  </section>`}function kt(){let e=qe(),t,r="cluster";e[0]==="topics"&&e[1]&&e[2]==="messages"?(t=d`<${Xe} topic=${e[1]} />`,r="topics"):e[0]==="topics"&&e[1]?(t=d`<${Qe} name=${e[1]} />`,r="topics"):e[0]==="topics"?(t=d`<${xt} />`,r="topics"):e[0]==="groups"&&e[1]?(t=d`<${Ze} name=${e[1]} />`,r="groups"):e[0]==="groups"?(t=d`<${Ye} />`,r="groups"):t=d`<${vt} />`;let o=(s,n,a)=>d`<a href=${n} aria-current=${r===s?"page":void 0}>${a}</a>`;return d`<header>
      <a class="brand" href="#/">Strata</a>
      <nav aria-label="Main">${o("cluster","#/","Cluster")}${o("topics","#/topics","Topics")}${o("groups","#/groups","Groups")}</nav>
    </header>
    <main>${t}</main>`}Ie(d`<${kt} />`,document.getElementById("app"));})();
