(()=>{var tt,C,kt,ge,j,gt,xt,Ct,Et,it,nt,st,ve,G={},St=[],ye=/acit|ex(?:s|g|n|p|$)|rph|grid|ows|mnc|ntw|ine[ch]|zoo|^ord|itera/i,et=Array.isArray;function U(t,e){for(var r in e)t[r]=e[r];return t}function ct(t){t&&t.parentNode&&t.parentNode.removeChild(t)}function ut(t,e,r){var o,s,n,a={};for(n in e)n=="key"?o=e[n]:n=="ref"?s=e[n]:a[n]=e[n];if(arguments.length>2&&(a.children=arguments.length>3?tt.call(arguments,2):r),typeof t=="function"&&t.defaultProps!=null)for(n in t.defaultProps)a[n]===void 0&&(a[n]=t.defaultProps[n]);return Y(t,a,o,s,null)}function Y(t,e,r,o,s){var n={type:t,props:e,key:r,ref:o,__k:null,__:null,__b:0,__e:null,__c:null,constructor:void 0,__v:s??++kt,__i:-1,__u:0};return s==null&&C.vnode!=null&&C.vnode(n),n}function rt(t){return t.children}function X(t,e){this.props=t,this.context=e}function W(t,e){if(e==null)return t.__?W(t.__,t.__i+1):null;for(var r;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null)return r.__e;return typeof t.type=="function"?W(t):null}function Pt(t){var e,r;if((t=t.__)!=null&&t.__c!=null){for(t.__e=t.__c.base=null,e=0;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null){t.__e=t.__c.base=r.__e;break}return Pt(t)}}function vt(t){(!t.__d&&(t.__d=!0)&&j.push(t)&&!Z.__r++||gt!=C.debounceRendering)&&((gt=C.debounceRendering)||xt)(Z)}function Z(){for(var t,e,r,o,s,n,a,u=1;j.length;)j.length>u&&j.sort(Ct),t=j.shift(),u=j.length,t.__d&&(r=void 0,o=void 0,s=(o=(e=t).__v).__e,n=[],a=[],e.__P&&((r=U({},o)).__v=o.__v+1,C.vnode&&C.vnode(r),dt(e.__P,r,o,e.__n,e.__P.namespaceURI,32&o.__u?[s]:null,n,s??W(o),!!(32&o.__u),a),r.__v=o.__v,r.__.__k[r.__i]=r,Lt(n,r,a),o.__e=o.__=null,r.__e!=s&&Pt(r)));Z.__r=0}function Tt(t,e,r,o,s,n,a,u,c,d,p){var l,f,h,b,g,$,m,v=o&&o.__k||St,R=e.length;for(c=we(r,e,v,c,R),l=0;l<R;l++)(h=r.__k[l])!=null&&(f=h.__i==-1?G:v[h.__i]||G,h.__i=l,$=dt(t,h,f,s,n,a,u,c,d,p),b=h.__e,h.ref&&f.ref!=h.ref&&(f.ref&&pt(f.ref,null,h),p.push(h.ref,h.__c||b,h)),g==null&&b!=null&&(g=b),(m=!!(4&h.__u))||f.__k===h.__k?c=It(h,c,t,m):typeof h.type=="function"&&$!==void 0?c=$:b&&(c=b.nextSibling),h.__u&=-7);return r.__e=g,c}function we(t,e,r,o,s){var n,a,u,c,d,p=r.length,l=p,f=0;for(t.__k=new Array(s),n=0;n<s;n++)(a=e[n])!=null&&typeof a!="boolean"&&typeof a!="function"?(c=n+f,(a=t.__k[n]=typeof a=="string"||typeof a=="number"||typeof a=="bigint"||a.constructor==String?Y(null,a,null,null,null):et(a)?Y(rt,{children:a},null,null,null):a.constructor==null&&a.__b>0?Y(a.type,a.props,a.key,a.ref?a.ref:null,a.__v):a).__=t,a.__b=t.__b+1,u=null,(d=a.__i=ke(a,r,c,l))!=-1&&(l--,(u=r[d])&&(u.__u|=2)),u==null||u.__v==null?(d==-1&&(s>p?f--:s<p&&f++),typeof a.type!="function"&&(a.__u|=4)):d!=c&&(d==c-1?f--:d==c+1?f++:(d>c?f--:f++,a.__u|=4))):t.__k[n]=null;if(l)for(n=0;n<p;n++)(u=r[n])!=null&&(2&u.__u)==0&&(u.__e==o&&(o=W(u)),Nt(u,u));return o}function It(t,e,r,o){var s,n;if(typeof t.type=="function"){for(s=t.__k,n=0;s&&n<s.length;n++)s[n]&&(s[n].__=t,e=It(s[n],e,r,o));return e}t.__e!=e&&(o&&(e&&t.type&&!e.parentNode&&(e=W(t)),r.insertBefore(t.__e,e||null)),e=t.__e);do e=e&&e.nextSibling;while(e!=null&&e.nodeType==8);return e}function ke(t,e,r,o){var s,n,a,u=t.key,c=t.type,d=e[r],p=d!=null&&(2&d.__u)==0;if(d===null&&t.key==null||p&&u==d.key&&c==d.type)return r;if(o>(p?1:0)){for(s=r-1,n=r+1;s>=0||n<e.length;)if((d=e[a=s>=0?s--:n++])!=null&&(2&d.__u)==0&&u==d.key&&c==d.type)return a}return-1}function yt(t,e,r){e[0]=="-"?t.setProperty(e,r??""):t[e]=r==null?"":typeof r!="number"||ye.test(e)?r:r+"px"}function Q(t,e,r,o,s){var n,a;t:if(e=="style")if(typeof r=="string")t.style.cssText=r;else{if(typeof o=="string"&&(t.style.cssText=o=""),o)for(e in o)r&&e in r||yt(t.style,e,"");if(r)for(e in r)o&&r[e]==o[e]||yt(t.style,e,r[e])}else if(e[0]=="o"&&e[1]=="n")n=e!=(e=e.replace(Et,"$1")),a=e.toLowerCase(),e=a in t||e=="onFocusOut"||e=="onFocusIn"?a.slice(2):e.slice(2),t.l||(t.l={}),t.l[e+n]=r,r?o?r.u=o.u:(r.u=it,t.addEventListener(e,n?st:nt,n)):t.removeEventListener(e,n?st:nt,n);else{if(s=="http://www.w3.org/2000/svg")e=e.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(e!="width"&&e!="height"&&e!="href"&&e!="list"&&e!="form"&&e!="tabIndex"&&e!="download"&&e!="rowSpan"&&e!="colSpan"&&e!="role"&&e!="popover"&&e in t)try{t[e]=r??"";break t}catch{}typeof r=="function"||(r==null||r===!1&&e[4]!="-"?t.removeAttribute(e):t.setAttribute(e,e=="popover"&&r==1?"":r))}}function wt(t){return function(e){if(this.l){var r=this.l[e.type+t];if(e.t==null)e.t=it++;else if(e.t<r.u)return;return r(C.event?C.event(e):e)}}}function dt(t,e,r,o,s,n,a,u,c,d){var p,l,f,h,b,g,$,m,v,R,w,F,M,H,k,P,D,O=e.type;if(e.constructor!=null)return null;128&r.__u&&(c=!!(32&r.__u),n=[u=e.__e=r.__e]),(p=C.__b)&&p(e);t:if(typeof O=="function")try{if(m=e.props,v="prototype"in O&&O.prototype.render,R=(p=O.contextType)&&o[p.__c],w=p?R?R.props.value:p.__:o,r.__c?$=(l=e.__c=r.__c).__=l.__E:(v?e.__c=l=new O(m,w):(e.__c=l=new X(m,w),l.constructor=O,l.render=Ce),R&&R.sub(l),l.props=m,l.state||(l.state={}),l.context=w,l.__n=o,f=l.__d=!0,l.__h=[],l._sb=[]),v&&l.__s==null&&(l.__s=l.state),v&&O.getDerivedStateFromProps!=null&&(l.__s==l.state&&(l.__s=U({},l.__s)),U(l.__s,O.getDerivedStateFromProps(m,l.__s))),h=l.props,b=l.state,l.__v=e,f)v&&O.getDerivedStateFromProps==null&&l.componentWillMount!=null&&l.componentWillMount(),v&&l.componentDidMount!=null&&l.__h.push(l.componentDidMount);else{if(v&&O.getDerivedStateFromProps==null&&m!==h&&l.componentWillReceiveProps!=null&&l.componentWillReceiveProps(m,w),!l.__e&&l.shouldComponentUpdate!=null&&l.shouldComponentUpdate(m,l.__s,w)===!1||e.__v==r.__v){for(e.__v!=r.__v&&(l.props=m,l.state=l.__s,l.__d=!1),e.__e=r.__e,e.__k=r.__k,e.__k.some(function(y){y&&(y.__=e)}),F=0;F<l._sb.length;F++)l.__h.push(l._sb[F]);l._sb=[],l.__h.length&&a.push(l);break t}l.componentWillUpdate!=null&&l.componentWillUpdate(m,l.__s,w),v&&l.componentDidUpdate!=null&&l.__h.push(function(){l.componentDidUpdate(h,b,g)})}if(l.context=w,l.props=m,l.__P=t,l.__e=!1,M=C.__r,H=0,v){for(l.state=l.__s,l.__d=!1,M&&M(e),p=l.render(l.props,l.state,l.context),k=0;k<l._sb.length;k++)l.__h.push(l._sb[k]);l._sb=[]}else do l.__d=!1,M&&M(e),p=l.render(l.props,l.state,l.context),l.state=l.__s;while(l.__d&&++H<25);l.state=l.__s,l.getChildContext!=null&&(o=U(U({},o),l.getChildContext())),v&&!f&&l.getSnapshotBeforeUpdate!=null&&(g=l.getSnapshotBeforeUpdate(h,b)),P=p,p!=null&&p.type===rt&&p.key==null&&(P=At(p.props.children)),u=Tt(t,et(P)?P:[P],e,r,o,s,n,a,u,c,d),l.base=e.__e,e.__u&=-161,l.__h.length&&a.push(l),$&&(l.__E=l.__=null)}catch(y){if(e.__v=null,c||n!=null)if(y.then){for(e.__u|=c?160:128;u&&u.nodeType==8&&u.nextSibling;)u=u.nextSibling;n[n.indexOf(u)]=null,e.__e=u}else{for(D=n.length;D--;)ct(n[D]);lt(e)}else e.__e=r.__e,e.__k=r.__k,y.then||lt(e);C.__e(y,e,r)}else n==null&&e.__v==r.__v?(e.__k=r.__k,e.__e=r.__e):u=e.__e=xe(r.__e,e,r,o,s,n,a,c,d);return(p=C.diffed)&&p(e),128&e.__u?void 0:u}function lt(t){t&&t.__c&&(t.__c.__e=!0),t&&t.__k&&t.__k.forEach(lt)}function Lt(t,e,r){for(var o=0;o<r.length;o++)pt(r[o],r[++o],r[++o]);C.__c&&C.__c(e,t),t.some(function(s){try{t=s.__h,s.__h=[],t.some(function(n){n.call(s)})}catch(n){C.__e(n,s.__v)}})}function At(t){return typeof t!="object"||t==null||t.__b&&t.__b>0?t:et(t)?t.map(At):U({},t)}function xe(t,e,r,o,s,n,a,u,c){var d,p,l,f,h,b,g,$=r.props,m=e.props,v=e.type;if(v=="svg"?s="http://www.w3.org/2000/svg":v=="math"?s="http://www.w3.org/1998/Math/MathML":s||(s="http://www.w3.org/1999/xhtml"),n!=null){for(d=0;d<n.length;d++)if((h=n[d])&&"setAttribute"in h==!!v&&(v?h.localName==v:h.nodeType==3)){t=h,n[d]=null;break}}if(t==null){if(v==null)return document.createTextNode(m);t=document.createElementNS(s,v,m.is&&m),u&&(C.__m&&C.__m(e,n),u=!1),n=null}if(v==null)$===m||u&&t.data==m||(t.data=m);else{if(n=n&&tt.call(t.childNodes),$=r.props||G,!u&&n!=null)for($={},d=0;d<t.attributes.length;d++)$[(h=t.attributes[d]).name]=h.value;for(d in $)if(h=$[d],d!="children"){if(d=="dangerouslySetInnerHTML")l=h;else if(!(d in m)){if(d=="value"&&"defaultValue"in m||d=="checked"&&"defaultChecked"in m)continue;Q(t,d,null,h,s)}}for(d in m)h=m[d],d=="children"?f=h:d=="dangerouslySetInnerHTML"?p=h:d=="value"?b=h:d=="checked"?g=h:u&&typeof h!="function"||$[d]===h||Q(t,d,h,$[d],s);if(p)u||l&&(p.__html==l.__html||p.__html==t.innerHTML)||(t.innerHTML=p.__html),e.__k=[];else if(l&&(t.innerHTML=""),Tt(e.type=="template"?t.content:t,et(f)?f:[f],e,r,o,v=="foreignObject"?"http://www.w3.org/1999/xhtml":s,n,a,n?n[0]:r.__k&&W(r,0),u,c),n!=null)for(d=n.length;d--;)ct(n[d]);u||(d="value",v=="progress"&&b==null?t.removeAttribute("value"):b!=null&&(b!==t[d]||v=="progress"&&!b||v=="option"&&b!=$[d])&&Q(t,d,b,$[d],s),d="checked",g!=null&&g!=t[d]&&Q(t,d,g,$[d],s))}return t}function pt(t,e,r){try{if(typeof t=="function"){var o=typeof t.__u=="function";o&&t.__u(),o&&e==null||(t.__u=t(e))}else t.current=e}catch(s){C.__e(s,r)}}function Nt(t,e,r){var o,s;if(C.unmount&&C.unmount(t),(o=t.ref)&&(o.current&&o.current!=t.__e||pt(o,null,e)),(o=t.__c)!=null){if(o.componentWillUnmount)try{o.componentWillUnmount()}catch(n){C.__e(n,e)}o.base=o.__P=null}if(o=t.__k)for(s=0;s<o.length;s++)o[s]&&Nt(o[s],e,r||typeof t.type!="function");r||ct(t.__e),t.__c=t.__=t.__e=void 0}function Ce(t,e,r){return this.constructor(t,r)}function Rt(t,e,r){var o,s,n,a;e==document&&(e=document.documentElement),C.__&&C.__(t,e),s=(o=typeof r=="function")?null:r&&r.__k||e.__k,n=[],a=[],dt(e,t=(!o&&r||e).__k=ut(rt,null,[t]),s||G,G,e.namespaceURI,!o&&r?[r]:s?null:e.firstChild?tt.call(e.childNodes):null,n,!o&&r?r:s?s.__e:e.firstChild,o,a),Lt(n,t,a)}tt=St.slice,C={__e:function(t,e,r,o){for(var s,n,a;e=e.__;)if((s=e.__c)&&!s.__)try{if((n=s.constructor)&&n.getDerivedStateFromError!=null&&(s.setState(n.getDerivedStateFromError(t)),a=s.__d),s.componentDidCatch!=null&&(s.componentDidCatch(t,o||{}),a=s.__d),a)return s.__E=s}catch(u){t=u}throw t}},kt=0,ge=function(t){return t!=null&&t.constructor==null},X.prototype.setState=function(t,e){var r;r=this.__s!=null&&this.__s!=this.state?this.__s:this.__s=U({},this.state),typeof t=="function"&&(t=t(U({},r),this.props)),t&&U(r,t),t!=null&&this.__v&&(e&&this._sb.push(e),vt(this))},X.prototype.forceUpdate=function(t){this.__v&&(this.__e=!0,t&&this.__h.push(t),vt(this))},X.prototype.render=rt,j=[],xt=typeof Promise=="function"?Promise.prototype.then.bind(Promise.resolve()):setTimeout,Ct=function(t,e){return t.__v.__b-e.__v.__b},Z.__r=0,Et=/(PointerCapture)$|Capture$/i,it=0,nt=wt(!1),st=wt(!0),ve=0;var V,E,ft,Dt,K=0,jt=[],T=C,Ot=T.__b,Mt=T.__r,Ht=T.diffed,Ft=T.__c,Ut=T.unmount,qt=T.__;function _t(t,e){T.__h&&T.__h(E,t,K||e),K=0;var r=E.__H||(E.__H={__:[],__h:[]});return t>=r.__.length&&r.__.push({}),r.__[t]}function _(t){return K=1,Ee(Kt,t)}function Ee(t,e,r){var o=_t(V++,2);if(o.t=t,!o.__c&&(o.__=[r?r(e):Kt(void 0,e),function(u){var c=o.__N?o.__N[0]:o.__[0],d=o.t(c,u);c!==d&&(o.__N=[d,o.__[1]],o.__c.setState({}))}],o.__c=E,!E.__f)){var s=function(u,c,d){if(!o.__c.__H)return!0;var p=o.__c.__H.__.filter(function(f){return!!f.__c});if(p.every(function(f){return!f.__N}))return!n||n.call(this,u,c,d);var l=o.__c.props!==u;return p.forEach(function(f){if(f.__N){var h=f.__[0];f.__=f.__N,f.__N=void 0,h!==f.__[0]&&(l=!0)}}),n&&n.call(this,u,c,d)||l};E.__f=!0;var n=E.shouldComponentUpdate,a=E.componentWillUpdate;E.componentWillUpdate=function(u,c,d){if(this.__e){var p=n;n=void 0,s(u,c,d),n=p}a&&a.call(this,u,c,d)},E.shouldComponentUpdate=s}return o.__N||o.__}function J(t,e){var r=_t(V++,3);!T.__s&&Vt(r.__H,e)&&(r.__=t,r.u=e,E.__H.__h.push(r))}function Wt(t){return K=5,zt(function(){return{current:t}},[])}function zt(t,e){var r=_t(V++,7);return Vt(r.__H,e)&&(r.__=t(),r.__H=e,r.__h=t),r.__}function Gt(t,e){return K=8,zt(function(){return t},e)}function Se(){for(var t;t=jt.shift();)if(t.__P&&t.__H)try{t.__H.__h.forEach(ot),t.__H.__h.forEach(ht),t.__H.__h=[]}catch(e){t.__H.__h=[],T.__e(e,t.__v)}}T.__b=function(t){E=null,Ot&&Ot(t)},T.__=function(t,e){t&&e.__k&&e.__k.__m&&(t.__m=e.__k.__m),qt&&qt(t,e)},T.__r=function(t){Mt&&Mt(t),V=0;var e=(E=t.__c).__H;e&&(ft===E?(e.__h=[],E.__h=[],e.__.forEach(function(r){r.__N&&(r.__=r.__N),r.u=r.__N=void 0})):(e.__h.forEach(ot),e.__h.forEach(ht),e.__h=[],V=0)),ft=E},T.diffed=function(t){Ht&&Ht(t);var e=t.__c;e&&e.__H&&(e.__H.__h.length&&(jt.push(e)!==1&&Dt===T.requestAnimationFrame||((Dt=T.requestAnimationFrame)||Pe)(Se)),e.__H.__.forEach(function(r){r.u&&(r.__H=r.u),r.u=void 0})),ft=E=null},T.__c=function(t,e){e.some(function(r){try{r.__h.forEach(ot),r.__h=r.__h.filter(function(o){return!o.__||ht(o)})}catch(o){e.some(function(s){s.__h&&(s.__h=[])}),e=[],T.__e(o,r.__v)}}),Ft&&Ft(t,e)},T.unmount=function(t){Ut&&Ut(t);var e,r=t.__c;r&&r.__H&&(r.__H.__.forEach(function(o){try{ot(o)}catch(s){e=s}}),r.__H=void 0,e&&T.__e(e,r.__v))};var Bt=typeof requestAnimationFrame=="function";function Pe(t){var e,r=function(){clearTimeout(o),Bt&&cancelAnimationFrame(e),setTimeout(t)},o=setTimeout(r,35);Bt&&(e=requestAnimationFrame(r))}function ot(t){var e=E,r=t.__c;typeof r=="function"&&(t.__c=void 0,r()),E=e}function ht(t){var e=E;t.__c=t.__(),E=e}function Vt(t,e){return!t||t.length!==e.length||e.some(function(r,o){return r!==t[o]})}function Kt(t,e){return typeof e=="function"?e(t):e}var Qt=function(t,e,r,o){var s;e[0]=0;for(var n=1;n<e.length;n++){var a=e[n++],u=e[n]?(e[0]|=a?1:2,r[e[n++]]):e[++n];a===3?o[0]=u:a===4?o[1]=Object.assign(o[1]||{},u):a===5?(o[1]=o[1]||{})[e[++n]]=u:a===6?o[1][e[++n]]+=u+"":a?(s=t.apply(u,Qt(t,u,r,["",null])),o.push(s),u[0]?e[0]|=2:(e[n-2]=0,e[n]=s)):o.push(u)}return o},Jt=new Map;function Yt(t){var e=Jt.get(this);return e||(e=new Map,Jt.set(this,e)),(e=Qt(this,e.get(t)||(e.set(t,e=(function(r){for(var o,s,n=1,a="",u="",c=[0],d=function(f){n===1&&(f||(a=a.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?c.push(0,f,a):n===3&&(f||a)?(c.push(3,f,a),n=2):n===2&&a==="..."&&f?c.push(4,f,0):n===2&&a&&!f?c.push(5,0,!0,a):n>=5&&((a||!f&&n===5)&&(c.push(n,0,a,s),n=6),f&&(c.push(n,f,0,s),n=6)),a=""},p=0;p<r.length;p++){p&&(n===1&&d(),d(p));for(var l=0;l<r[p].length;l++)o=r[p][l],n===1?o==="<"?(d(),c=[c],n=3):a+=o:n===4?a==="--"&&o===">"?(n=1,a=""):a=o+a[0]:u?o===u?u="":a+=o:o==='"'||o==="'"?u=o:o===">"?(d(),n=1):n&&(o==="="?(n=5,s=a,a=""):o==="/"&&(n<5||r[p][l+1]===">")?(d(),n===3&&(c=c[0]),n=c,(c=c[0]).push(2,0,n),n=0):o===" "||o==="	"||o===`
`||o==="\r"?(d(),n=2):a+=o),n===3&&a==="!--"&&(n=4,c=c[0])}return d(),c})(t)),e),arguments,[])).length>1?e:e[0]}var i=Yt.bind(ut),Te=5e3;async function S(t,e,r){let o={method:t,headers:{}};t!=="GET"&&(o.headers["X-Strata-Console"]="1"),r!==void 0&&(o.headers["Content-Type"]="application/json",o.body=JSON.stringify(r));let s=await fetch("/api/v1"+e,o);if(s.status===204)return null;let n=null;try{n=await s.json()}catch{}if(!s.ok){let a=n&&n.error?n.error:s.status+" "+s.statusText,u=new Error(a);throw u.code=n&&n.code,u.configErrors=n&&n.configErrors,u}return n}function I(t,e=!0){let[r,o]=_({data:null,error:null}),s=Gt(()=>{t&&S("GET",t).then(n=>o({data:n,error:null}),n=>o(a=>({data:a.data,error:n})))},[t]);return J(()=>{if(o({data:null,error:null}),s(),!e)return;let n=setInterval(s,Te);return()=>clearInterval(n)},[s,e]),[r.data,r.error,s]}function Xt(){let[t,e]=_(location.hash);return J(()=>{let r=()=>e(location.hash);return addEventListener("hashchange",r),()=>removeEventListener("hashchange",r)},[]),(t.replace(/^#/,"")||"/").split("/").filter(Boolean).map(decodeURIComponent)}var x=encodeURIComponent;function A({error:t}){return t?i`<p class="error" role="alert">${t.message}${t.code?i` <code>${t.code}</code>`:""}</p>`:null}function N({data:t,error:e}){return t?null:e?i`<${A} error=${e} />`:i`<p class="muted">Loading…</p>`}function L({label:t,value:e,warn:r,href:o}){let s="stat"+(r?" warn":""),n=i`<span class="stat-value">${e}</span><span class="stat-label">${t}</span>`;return o?i`<a class=${s+" stat-link"} href=${o}>${n}</a>`:i`<div class=${s}>${n}</div>`}function z(t,e){let r=[];for(let o of t.split(`
`)){if(!o.trim())continue;let s=o.indexOf(e);if(s<1)throw new Error(`"${o}" is not key${e}value`);r.push([o.slice(0,s).trim(),o.slice(s+1).trim()])}return r}function at({what:t,name:e,onDelete:r}){let[o,s]=_(!1),[n,a]=_(""),[u,c]=_(null);return o?i`<form class="card danger-zone" onSubmit=${async p=>{p.preventDefault();try{await r()}catch(l){c(l)}}}>
    <label><span>Type <code>${e}</code> to delete this ${t}</span><input value=${n} onInput=${p=>a(p.target.value)} /></label>
    <${A} error=${u} />
    <button type="submit" class="danger" disabled=${n!==e}>Delete ${t} ${e}</button>
    <button type="button" onClick=${()=>s(!1)}>Cancel</button>
  </form>`:i`<button type="button" class="danger" onClick=${()=>s(!0)}>Delete ${t}…</button>`}var te=[{state:"under-replicated",field:"underReplicatedPartitions",label:"Under-replicated"},{state:"offline",field:"offlinePartitions",label:"Offline"},{state:"non-preferred-leader",field:"nonPreferredLeaderPartitions",label:"Not on preferred leader"}];function ee(t){return t<0?"—":t<1e3?"now":t<12e4?Math.round(t/1e3)+" s ago":Math.round(t/6e4)+" min ago"}function Ie({status:t}){return i`<span class=${"badge status-"+t}>${t}</span>`}function re({label:t,page:e,pageSize:r,total:o,setPage:s,noun:n}){let a=Math.max(1,Math.ceil(o/r));return i`<nav class="pager" aria-label=${t}>
    <button type="button" disabled=${e<=1} onClick=${()=>s(e-1)}>Previous</button>
    <span>Page ${e} of ${a} · ${o} ${n}</span>
    <button type="button" disabled=${e>=a} onClick=${()=>s(e+1)}>Next</button>
  </nav>`}function Zt({id:t,members:e,leaderId:r,caption:o}){return e.length===0?i`<p class="muted">No ${o.toLowerCase()}.</p>`:i`<div class="scroll"><table id=${t} aria-label=${o}>
    <thead><tr><th>Node</th><th>Raft role</th><th>Log end</th><th>Lag (entries)</th><th>Last heard</th></tr></thead>
    <tbody>${e.map(s=>i`<tr key=${s.nodeId} class=${s.lastContactMs>5e3||s.lastContactMs<0?"warn":""}>
      <td>${s.nodeId}</td><td>${s.nodeId===r?"leader":t==="quorum-voters"?"follower":"observer"}</td>
      <td>${s.logEndOffset<0?"—":s.logEndOffset}</td><td>${s.lag<0?"—":s.lag}</td><td>${ee(s.lastContactMs)}</td></tr>`)}</tbody>
  </table></div>`}function oe(){let[t,e]=I("/cluster"),r=t?t.nodes.filter(o=>o.status==="alive").length:0;return i`<section>
    <h1>Cluster</h1>
    <${N} data=${t} error=${e} />
    ${t&&i`
      <p class="muted">Cluster id <code>${t.clusterId}</code> · served by node ${t.node}</p>
      ${e&&i`<${A} error=${e} />`}
      <div class="stats">
        <${L} label="Nodes alive" value=${r+" / "+t.nodes.length} warn=${r<t.nodes.length} />
        <${L} label="Controller" value=${t.controller<0?"none":t.controller} warn=${t.controller<0} />
        <${L} label="Raft epoch" value=${t.quorum.leaderEpoch<0?"—":t.quorum.leaderEpoch} />
        <${L} label="Topics" value=${t.topics} href="#/topics" />
        <${L} label="Partitions" value=${t.partitions} />
        ${te.map(o=>i`<${L} key=${o.state} label=${o.label} value=${t[o.field]} warn=${t[o.field]>0}
          href=${"#/cluster/partitions/"+o.state} />`)}
      </div>
      <h2>Nodes</h2>
      <div class="scroll"><table id="cluster-nodes">
        <thead><tr><th>Node</th><th>Address</th><th>Rack</th><th>Roles</th><th>Status</th><th>Last heard</th></tr></thead>
        <tbody>${t.nodes.map(o=>i`<tr key=${o.nodeId} class=${o.status==="alive"?"":"warn"}>
          <td>${o.nodeId}${o.nodeId===t.node?i` <span class="badge">this console</span>`:""}</td>
          <td>${o.port<0?"—":o.host+":"+o.port}</td><td>${o.rack||"—"}</td>
          <td>${o.roles.join(", ")}${o.activeController?i` <span class="badge">active controller</span>`:""}</td>
          <td><${Ie} status=${o.status} /></td><td>${ee(o.lastContactMs)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Metadata quorum</h2>
      ${t.quorum.error?i`<p class="error" role="alert">The quorum could not be described: ${t.quorum.error}</p>`:i`<p class="muted" id="quorum-summary">Raft leader node ${t.quorum.leaderId} in epoch ${t.quorum.leaderEpoch};
            committed up to entry ${t.quorum.highWatermark}; controllers (voters) ${t.controllers.join(", ")}.</p>
          <${Zt} id="quorum-voters" members=${t.quorum.voters} leaderId=${t.quorum.leaderId} caption="Voters" />
          <h3>Observers</h3>
          <${Zt} id="quorum-observers" members=${t.quorum.observers} leaderId=${t.quorum.leaderId} caption="Observers" />`}
      <p class="muted">Partition counts from metadata ${Math.round(t.metadataAgeMs/100)/10} s old.</p>`}
  </section>`}function ae({state:t}){let[e,r]=_(1),o=50,s=te.find(u=>u.state===t),[n,a]=I(`/cluster/partitions?state=${x(t)}&page=${e}&pageSize=${o}`);return i`<section>
    <p class="crumbs"><a href="#/">Cluster</a> /</p>
    <h1>${s?s.label:t} partitions</h1>
    <${N} data=${n} error=${a} />
    ${n&&i`
      <div class="scroll"><table id="problem-partitions">
        <thead><tr><th>Topic</th><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Offline replicas</th></tr></thead>
        <tbody>${n.partitions.map(u=>i`<tr key=${u.topic+"/"+u.partition}>
          <td><a href=${"#/topics/"+x(u.topic)}>${u.topic}</a></td><td>${u.partition}</td><td>${u.leader<0?"none":u.leader}</td>
          <td>${u.replicas.join(", ")}</td><td>${u.isr.join(", ")}</td><td>${u.offlineReplicas.join(", ")||"—"}</td></tr>`)}</tbody>
      </table></div>
      ${n.total===0&&i`<p class="ok" role="status">None.</p>`}
      <${re} label="Partition pages" page=${e} pageSize=${o} total=${n.total} setPage=${r} noun="partitions" />`}
  </section>`}var Le=/^[a-zA-Z0-9._-]{1,249}$/;function Ae({onCreated:t}){let[e,r]=_(""),[o,s]=_("1"),[n,a]=_("1"),[u,c]=_(""),[d,p]=_(null),[l,f]=_(!1);return i`<form class="card" onSubmit=${async b=>{b.preventDefault(),p(null);try{if(!Le.test(e)||e==="."||e==="..")throw new Error('Topic names use 1 to 249 of: letters, digits, ".", "_", "-".');let g=Number(o),$=Number(n);if(!Number.isInteger(g)||g<1)throw new Error("Partitions must be a whole number of at least 1.");if(!Number.isInteger($)||$<1)throw new Error("Replication factor must be a whole number of at least 1.");let m=Object.fromEntries(z(u,"="));f(!0),await S("POST","/topics",{name:e,partitions:g,replicationFactor:$,configs:m}),r(""),t(e)}catch(g){p(g)}finally{f(!1)}}} aria-labelledby="create-topic">
    <h2 id="create-topic">Create a topic</h2>
    <div class="fields">
      <label>Name<input id="new-topic-name" value=${e} onInput=${b=>r(b.target.value)} required /></label>
      <label>Partitions<input id="new-topic-partitions" type="number" min="1" value=${o} onInput=${b=>s(b.target.value)} /></label>
      <label>Replication factor<input id="new-topic-rf" type="number" min="1" value=${n} onInput=${b=>a(b.target.value)} /></label>
    </div>
    <label><span>Configs (one <code>name=value</code> per line)</span><textarea rows="2" value=${u} onInput=${b=>c(b.target.value)} placeholder="retention.ms=86400000"></textarea></label>
    <${A} error=${d} />
    <button id="create-topic-submit" type="submit" disabled=${l}>Create topic</button>
  </form>`}function ne(){let[t,e]=_(""),[r,o]=_(1),[s,n]=_(null),a=25,[u,c,d]=I(`/topics?search=${x(t)}&page=${r}&pageSize=${a}`);return i`<section>
    <h1>Topics</h1>
    <div class="toolbar">
      <label class="search">Search<input type="search" id="topic-search" value=${t}
        onInput=${p=>{e(p.target.value),o(1)}} placeholder="name contains…" /></label>
    </div>
    <${N} data=${u} error=${c} />
    ${u&&i`
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Partitions</th><th>Replication</th><th></th></tr></thead>
        <tbody>${u.topics.map(p=>i`<tr key=${p.name}>
          <td><a href=${"#/topics/"+x(p.name)}>${p.name}</a>${p.internal?i` <span class="badge">internal</span>`:""}</td>
          <td>${p.partitions}</td><td>${p.replicationFactor}</td>
          <td><a href=${"#/topics/"+x(p.name)+"/messages"}>Messages</a></td></tr>`)}</tbody>
      </table></div>
      ${u.topics.length===0&&i`<p class="muted">No topics${t?" match":""}.</p>`}
      <${re} label="Topic pages" page=${r} pageSize=${a} total=${u.total} setPage=${o} noun="topics" />`}
    ${s&&i`<p class="ok" role="status">Created <a href=${"#/topics/"+x(s)}>${s}</a>.</p>`}
    <${Ae} onCreated=${p=>{n(p),d()}} />
  </section>`}function se(t){if(t===void 0||t<0)return"—";let e=["B","KiB","MiB","GiB","TiB"],r=t,o=0;for(;r>=1024&&o<e.length-1;)r/=1024,o++;return(o===0?r:r.toFixed(1))+" "+e[o]}function Ne({topic:t,draft:e,setDraft:r,onApplied:o}){let[s,n]=_(""),[a,u]=_(null),[c,d]=_(null),[p,l]=_(null),[f,h]=_(!1),b=()=>({set:Object.fromEntries(z(e,"=")),delete:s.split(/[\s,]+/).filter(Boolean)}),g=e+`
--
`+s,$=async m=>{d(null),l(null),h(!0);try{let v=await S("PATCH","/topics/"+x(t)+"/configs",{...b(),validateOnly:m});m?(u(g),l(`Valid: ${v.changed.join(", ")}. Apply to change them.`)):(u(null),l(`Applied: ${v.changed.join(", ")}.`),r(""),n(""),o())}catch(v){u(null),d(v)}finally{h(!1)}};return i`<form class="card" aria-labelledby="edit-configs" onSubmit=${m=>{m.preventDefault(),$(!0)}}>
    <h2 id="edit-configs">Edit configs</h2>
    <label><span>Set (one <code>name=value</code> per line; <em>Edit</em> in the table copies a config here)</span>
      <textarea id="config-set" rows="3" value=${e} onInput=${m=>{r(m.target.value),u(null)}} placeholder="retention.ms=86400000"></textarea></label>
    <label><span>Delete (back to the default; names separated by spaces or commas)</span>
      <input id="config-delete" value=${s} onInput=${m=>{n(m.target.value),u(null)}} /></label>
    ${c&&i`<div class="error" role="alert" id="config-error">${c.message}
      ${c.configErrors&&c.configErrors.length>0&&i`<ul>${c.configErrors.map(m=>i`<li><code>${m.name}</code>: ${m.error}</li>`)}</ul>`}</div>`}
    ${p&&i`<p class="ok" role="status" id="config-result">${p}</p>`}
    <button id="config-validate" type="submit" disabled=${f}>Validate</button>
    <button id="config-apply" type="button" class="apply" disabled=${f||a!==g} onClick=${()=>$(!1)}>Apply</button>
  </form>`}function le({name:t}){let[e,r,o]=I("/topics/"+x(t)),[s,n]=_(""),a=async()=>{await S("DELETE","/topics/"+x(t)),location.hash="#/topics"},u=c=>n(d=>(d&&!d.endsWith(`
`)?d+`
`:d)+`${c.name}=${c.value??""}`);return i`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <h1>${t}</h1>
    <${N} data=${e} error=${r} />
    ${e&&i`
      <p><a class="button" href=${"#/topics/"+x(t)+"/messages"}>Browse messages</a></p>
      <h2>Partitions</h2>
      <div class="scroll"><table>
        <thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Log start</th><th>High watermark</th><th>Records</th><th>Local size</th><th>In the bucket</th><th>Not uploaded yet</th></tr></thead>
        <tbody>${e.partitions.map(c=>i`<tr key=${c.partition} class=${c.isr.length<c.replicas.length?"warn":""}>
          <td>${c.partition}</td><td>${c.leader<0?"none":c.leader}</td><td>${c.replicas.join(", ")}</td><td>${c.isr.join(", ")}</td>
          <td>${c.logStartOffset}</td><td>${c.highWatermark}</td><td>${Math.max(0,c.highWatermark-c.logStartOffset)}</td>
          <td>${se(c.localBytes)}</td><td>${se(c.remoteBytes)}</td>
          <td title="records below the high watermark not in the bucket yet (the active segment is uploaded when it rolls)">${c.uploadLag<0?"—":c.uploadLag}</td></tr>`)}</tbody>
      </table></div>
      <h2>Configs</h2>
      <div class="scroll"><table id="topic-configs">
        <thead><tr><th>Name</th><th>Value</th><th>Source</th><th></th></tr></thead>
        <tbody>${e.configs.map(c=>i`<tr key=${c.name} class=${c.source==="DYNAMIC_TOPIC_CONFIG"?"set":""}>
          <td>${c.name}</td><td class="wrap">${c.sensitive?"(sensitive)":c.value??"—"}</td><td>${c.source}</td>
          <td>${!c.sensitive&&i`<button type="button" class="small" aria-label=${"Edit "+c.name} onClick=${()=>u(c)}>Edit</button>`}</td></tr>`)}</tbody>
      </table></div>
      <${Ne} topic=${t} draft=${s} setDraft=${n} onApplied=${o} />
      ${!e.internal&&i`<${at} what="topic" name=${t} onDelete=${a} />`}`}
  </section>`}function Re(t){return t.encoding==="base64"?Uint8Array.from(atob(t.data),e=>e.charCodeAt(0)):new TextEncoder().encode(t.data)}function De(t){let e=[];for(let r=0;r<t.length;r+=16){let o=t.slice(r,r+16),s=[...o].map(a=>a.toString(16).padStart(2,"0")).join(" "),n=[...o].map(a=>a>=32&&a<127?String.fromCharCode(a):".").join("");e.push(r.toString(16).padStart(8,"0")+"  "+s.padEnd(47)+"  |"+n+"|")}return e.join(`
`)}function mt(t,e){return t==null?i`<span class="muted">null</span>`:e==="hex"?i`<pre class="hex">${De(Re(t))}</pre>`:t.encoding==="base64"?i`<span class="badge">base64</span> ${t.data}`:e==="json"&&t.json?i`<pre>${JSON.stringify(JSON.parse(t.data),null,2)}</pre>`:t.data}function Oe({topic:t,partitions:e,onProduced:r}){let[o,s]=_(""),[n,a]=_(""),[u,c]=_(""),[d,p]=_(""),[l,f]=_(null),[h,b]=_(null);return i`<form class="card" onSubmit=${async $=>{$.preventDefault(),b(null),f(null);try{let m={key:n===""?null:{data:n},value:{data:u},headers:z(d,":").map(([R,w])=>({key:R,value:{data:w}}))};o!==""&&(m.partition=Number(o));let v=await S("POST","/topics/"+x(t)+"/records",m);f(v),r(v)}catch(m){b(m)}}} aria-labelledby="produce">
    <h2 id="produce">Produce a record</h2>
    <div class="fields">
      <label>Partition<select id="produce-partition" value=${o} onChange=${$=>s($.target.value)}>
        <option value="">by key</option>
        ${Array.from({length:e},($,m)=>i`<option value=${m}>${m}</option>`)}
      </select></label>
      <label>Key<input id="produce-key" value=${n} onInput=${$=>a($.target.value)} placeholder="(none)" /></label>
    </div>
    <label>Value<textarea id="produce-value" rows="3" value=${u} onInput=${$=>c($.target.value)}></textarea></label>
    <label><span>Headers (one <code>name: value</code> per line)</span><textarea rows="2" value=${d} onInput=${$=>p($.target.value)}></textarea></label>
    <${A} error=${h} />
    ${l&&i`<p class="ok" role="status" id="produce-result">Produced to partition ${l.partition} at offset ${l.offset}.</p>`}
    <button id="produce-submit" type="submit">Produce</button>
  </form>`}function ie({topic:t}){let[e]=I("/topics/"+x(t),!1),[r,o]=_("0"),[s,n]=_("start"),[a,u]=_("0"),[c,d]=_(""),[p,l]=_("50"),[f,h]=_("text"),[b,g]=_(""),[$,m]=_(""),[v,R]=_(null),[w,F]=_(null),[M,H]=_(null),k=()=>{let y=`?partition=${r}&limit=${p}`;return s==="offset"&&(y+="&offset="+x(a)),s==="time"&&(y+="&timestamp="+(c?new Date(c).getTime():0)),s==="end"&&(y+="&fromEnd=true"),y+P()},P=()=>(b?"&key="+x(b):"")+($.trim()?"&filter="+x($):""),D=y=>{R(y),S("GET","/topics/"+x(t)+"/records"+y).then(B=>{F(B),H(null)},H)};J(()=>{D(k())},[t]);let O=w&&w.nextOffset<w.highWatermark;return i`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> / <a href=${"#/topics/"+x(t)}>${t}</a> /</p>
    <h1>Messages</h1>
    <form class="card" onSubmit=${y=>{y.preventDefault(),D(k())}}>
      <div class="fields">
        <label>Partition<select id="browse-partition" value=${r} onChange=${y=>o(y.target.value)}>
          ${Array.from({length:e?e.partitions.length:1},(y,B)=>i`<option value=${B}>${B}</option>`)}
        </select></label>
        <label>From<select id="browse-from" value=${s} onChange=${y=>n(y.target.value)}>
          <option value="start">the log start</option><option value="offset">an offset</option>
          <option value="time">a time</option><option value="end">the end</option>
        </select></label>
        ${s==="offset"&&i`<label>Offset<input type="number" min="0" value=${a} onInput=${y=>u(y.target.value)} /></label>`}
        ${s==="time"&&i`<label>Time<input type="datetime-local" value=${c} onInput=${y=>d(y.target.value)} /></label>`}
        <label>Limit<input type="number" min="1" max="500" value=${p} onInput=${y=>l(y.target.value)} /></label>
        <label>Decode as<select id="browse-decode" value=${f} onChange=${y=>h(y.target.value)}>
          <option value="text">text</option><option value="json">JSON (pretty)</option><option value="hex">hex</option>
        </select></label>
      </div>
      <div class="fields">
        <label>Key contains<input id="browse-key" value=${b} onInput=${y=>g(y.target.value)} /></label>
        <label class="grow"><span>Filter (expression over <code>value</code>, <code>key</code>, <code>headers</code>, <code>offset</code>, <code>timestamp</code>)</span>
          <input id="browse-filter" value=${$} onInput=${y=>m(y.target.value)} placeholder='value.amount > 100 && headers.source == "web"' /></label>
      </div>
      <button type="submit" id="browse-submit">Load</button>
      ${v&&i` <button type="button" onClick=${()=>D(v)}>Refresh</button>`}
    </form>
    <${A} error=${M} />
    ${w&&i`
      <p class="muted" id="browse-summary">Partition ${w.partition}: offsets ${w.logStartOffset} to ${w.highWatermark-1}; showing ${w.records.length} from ${w.startOffset}${w.scanned!==w.records.length?i`, ${w.scanned} examined`:""}.
        ${w.stoppedBy&&i` The scan stopped at its ${w.stoppedBy==="time"?"time":"record"} limit; continue with Next records.`}
        ${w.filterErrors>0&&i` The filter failed on ${w.filterErrors} records (${w.filterError}).`}</p>
      <div class="scroll"><table class="records">
        <thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${w.records.map(y=>i`<tr key=${y.offset}>
          <td>${y.offset}</td><td>${new Date(y.timestamp).toISOString()}</td>
          <td class="wrap">${mt(y.key,f)}</td><td class="wrap value">${mt(y.value,f)}</td>
          <td class="wrap">${y.headers.map(B=>i`<div><b>${B.key}</b>: ${mt(B.value,f)}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${w.records.length===0&&i`<p class="muted">No records ${w.scanned>0?"match":"there"}.</p>`}
      ${O&&i`<button type="button" onClick=${()=>D(`?partition=${w.partition}&limit=${p}&offset=${w.nextOffset}`+P())}>Next records</button>`}`}
    ${e&&i`<${Oe} topic=${t} partitions=${e.partitions.length} onProduced=${()=>v&&D(v)} />`}
  </section>`}function ce(){let[t,e]=I("/groups");return i`<section>
    <h1>Consumer groups</h1>
    <${N} data=${t} error=${e} />
    ${t&&i`
      <div class="scroll"><table>
        <thead><tr><th>Group</th><th>State</th><th>Protocol</th><th>Coordinator</th></tr></thead>
        <tbody>${t.groups.map(r=>i`<tr key=${r.group}>
          <td><a href=${"#/groups/"+x(r.group)}>${r.group}</a></td><td>${r.state}</td><td>${r.protocolType||"—"}</td><td>${r.coordinator}</td></tr>`)}</tbody>
      </table></div>
      ${t.groups.length===0&&i`<p class="muted">No groups.</p>`}`}
  </section>`}function $t(t){return t===void 0||t<0?"—":t<60?t.toFixed(t<10?1:0)+" s":t<3600?Math.floor(t/60)+" min "+Math.round(t%60)+" s":Math.floor(t/3600)+" h "+Math.round(t%3600/60)+" min"}var Me={OK:"status-ok",WARN:"status-warn",STOP:"status-err",STALL:"status-err",REWIND:"status-err"};function He({status:t}){return t?i`<span class=${"badge "+(Me[t]||"")}>${t}</span>`:i`<span class="muted">—</span>`}function Fe({points:t}){if(!t||t.length===0)return i`<p class="muted">No measurements yet.</p>`;let s=Math.max(Date.now(),t[t.length-1].t),n=Math.max(s-3600*1e3,Math.min(t[0].t,s-300*1e3)),a=Math.max(1,...t.map(f=>f.records)),u=f=>28+(Math.max(f,n)-n)/(s-n)*568,c=f=>6+(1-f/a)*116,d=t.map(f=>`${u(f.t).toFixed(1)},${c(f.records).toFixed(1)}`).join(" "),p=t[t.length-1],l=`Total lag over the last hour: ${t.length} measurements, now ${p.records} records, at most ${a}`;return i`<figure class="chart">
    <svg id="lag-chart" viewBox=${"0 0 600 140"} role="img" aria-label=${l}>
      <title>${l}</title>
      <line x1=${28} y1=${c(0)} x2=${596} y2=${c(0)} class="axis" />
      <line x1=${28} y1=${c(a)} x2=${596} y2=${c(a)} class="grid" />
      <text x="2" y=${c(a)+4} class="tick">${a}</text>
      <text x="2" y=${c(0)+4} class="tick">0</text>
      <text x=${28} y=${138} class="tick">−${Math.round((s-n)/6e4)} min</text>
      <text x=${596} y=${138} class="tick" text-anchor="end">now</text>
      ${t.length>1?i`<polyline points=${d} class="lag-line" />`:""}
      ${t.map(f=>i`<circle cx=${u(f.t)} cy=${c(f.records)} r="2.5" class="lag-dot"><title>${new Date(f.t).toLocaleTimeString()}: ${f.records} records${f.seconds>=0?", "+$t(f.seconds):""}</title></circle>`)}
    </svg>
    <figcaption class="muted">Total lag in records over the last hour at most (sampled every 30 s, and whenever this page refreshes).</figcaption>
  </figure>`}function Ue({group:t,topics:e,active:r,onApplied:o}){let[s,n]=_("earliest"),[a,u]=_(""),[c,d]=_("0"),[p,l]=_(""),[f,h]=_(null),[b,g]=_(null),[$,m]=_(null),[v,R]=_(!1),w=k=>{let P={to:s,dryRun:k};return a&&(P.topics=[a]),s==="offset"&&(P.offset=Number(c)),s==="timestamp"&&(P.timestamp=p?new Date(p).getTime():0),P},F=JSON.stringify(w(!0)),M=async k=>{m(null),g(null),R(!0);try{if(s==="offset"&&!(Number.isInteger(Number(c))&&Number(c)>=0))throw new Error("The offset must be a whole number of at least 0.");if(s==="timestamp"&&!p)throw new Error("Choose a time.");let P=await S("POST","/groups/"+x(t)+"/reset-offsets",w(k));k?h({key:F,offsets:P.offsets}):(h(null),g(P.applied?`Committed ${P.offsets.length} offsets.`:"Some offsets were not committed: "+P.offsets.filter(D=>D.error).map(D=>`${D.topic}/${D.partition}: ${D.error}`).join("; ")),o())}catch(P){m(P)}finally{R(!1)}},H=()=>h(null);return i`<form class="card" aria-labelledby="reset-offsets" onSubmit=${k=>{k.preventDefault(),M(!0)}}>
    <h2 id="reset-offsets">Reset offsets</h2>
    ${r&&i`<p class="muted">The group has members: Kafka moves only an inactive group's offsets, so stop its consumers first.</p>`}
    <div class="fields">
      <label>To<select id="reset-to" value=${s} onChange=${k=>{n(k.target.value),H()}}>
        <option value="earliest">the earliest offset</option><option value="latest">the latest offset</option>
        <option value="timestamp">a time</option><option value="offset">an offset</option>
      </select></label>
      <label>Topic<select id="reset-topic" value=${a} onChange=${k=>{u(k.target.value),H()}}>
        <option value="">all of the group's</option>
        ${e.map(k=>i`<option value=${k}>${k}</option>`)}
      </select></label>
      ${s==="offset"&&i`<label>Offset<input id="reset-offset" type="number" min="0" value=${c} onInput=${k=>{d(k.target.value),H()}} /></label>`}
      ${s==="timestamp"&&i`<label>Time<input id="reset-time" type="datetime-local" value=${p} onInput=${k=>{l(k.target.value),H()}} /></label>`}
    </div>
    <${A} error=${$} />
    ${f&&i`<div class="scroll"><table id="reset-preview">
      <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>New offset</th><th></th></tr></thead>
      <tbody>${f.offsets.map(k=>i`<tr key=${k.topic+"/"+k.partition}>
        <td>${k.topic}</td><td>${k.partition}</td><td>${k.currentOffset<0?"—":k.currentOffset}</td><td>${k.newOffset}</td><td class="wrap">${k.error||""}</td></tr>`)}</tbody>
    </table></div>`}
    ${b&&i`<p class="ok" role="status" id="reset-result">${b}</p>`}
    <button id="reset-preview-submit" type="submit" disabled=${v}>Dry run</button>
    <button id="reset-apply" type="button" class="apply" disabled=${v||!f||f.key!==F} onClick=${()=>M(!1)}>Apply these offsets</button>
  </form>`}function ue({name:t}){let[e,r,o]=I("/groups/"+x(t)),s=async()=>{await S("DELETE","/groups/"+x(t)),location.hash="#/groups"},n=e?[...new Set(e.offsets.map(a=>a.topic))].sort():[];return i`<section>
    <p class="crumbs"><a href="#/groups">Consumer groups</a> /</p>
    <h1>${t}</h1>
    <${N} data=${e} error=${r} />
    ${e&&i`
      <div class="stats">
        <${L} label="State" value=${e.state} />
        <${L} label="Members" value=${e.members.length} />
        <${L} label="Total lag" value=${i`<span id="group-total-lag">${e.totalLag}</span>`} warn=${e.totalLag>0} />
        <${L} label="Lag in seconds" value=${$t(e.maxLagSeconds)} warn=${e.maxLagSeconds>60} />
        <${L} label="Status" value=${i`<span id="group-status">${e.status||"—"}</span>`} warn=${e.severity==="WARN"||e.severity==="ERR"} />
        <${L} label="Coordinator" value=${e.coordinator} />
      </div>
      <h2>Lag over the last hour</h2>
      <${Fe} points=${e.history} />
      <h2>Lag per partition</h2>
      <div class="scroll"><table id="group-lag">
        <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>Log end</th><th>Lag</th><th>Lag (time)</th><th>Status</th><th>Member</th></tr></thead>
        <tbody>${e.offsets.map(a=>i`<tr key=${a.topic+"/"+a.partition}>
          <td><a href=${"#/topics/"+x(a.topic)}>${a.topic}</a></td><td>${a.partition}</td>
          <td>${a.committedOffset<0?"—":a.committedOffset}</td><td>${a.logEndOffset}</td>
          <td class=${a.lag>0?"lag":""}>${a.lag<0?"?":a.lag}</td><td>${$t(a.lagSeconds)}</td>
          <td><${He} status=${a.status} /></td><td class="wrap">${a.memberId||"—"}</td></tr>`)}</tbody>
      </table></div>
      <h2>Members</h2>
      <div class="scroll"><table>
        <thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Assigned</th></tr></thead>
        <tbody>${e.members.map(a=>i`<tr key=${a.memberId}>
          <td class="wrap">${a.memberId}</td><td>${a.clientId}</td><td>${a.clientHost}</td>
          <td>${a.assigned.map(u=>i`<div>${u.topic}: ${u.partitions.join(", ")}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${e.members.length===0&&i`<p class="muted">No members.</p>`}
      <${Ue} group=${t} topics=${n} active=${e.members.length>0} onApplied=${o} />
      <${at} what="group" name=${t} onDelete=${s} />`}
  </section>`}var qe=t=>t==="FAILED"?"warn":t==="PAUSED"||t==="STOPPED"?"set":"";function de({trace:t}){if(!t)return null;let e=t.split(`
`);return i`<details class="trace"><summary>${e[0]}</summary><pre>${e.slice(1).join(`
`)}</pre></details>`}function Be({c:t,onChanged:e}){let[r,o]=_(null),[s,n]=_(!1),a=async c=>{o(null),n(!0);try{await S("POST","/connect/"+x(t.name)+c),e()}catch(d){o(d)}finally{n(!1)}},u=t.state==="PAUSED"||t.state==="STOPPED";return i`<div class="card connector" id=${"connector-"+t.name}>
    <h2>${t.name} <span class="badge">${t.type}</span> <span class=${"state "+qe(t.state)}>${t.state}</span></h2>
    <p class="muted"><code>${t.class||"—"}</code> · worker ${t.workerId||"—"}</p>
    <${de} trace=${t.trace} />
    <div class="scroll"><table>
      <thead><tr><th>Task</th><th>State</th><th>Worker</th><th>Error</th><th></th></tr></thead>
      <tbody>${t.tasks.map(c=>i`<tr key=${c.id} class=${c.state==="FAILED"?"warn":""}>
        <td>${c.id}</td><td>${c.state}</td><td>${c.workerId||"—"}</td><td class="wrap"><${de} trace=${c.trace} /></td>
        <td><button type="button" disabled=${s} onClick=${()=>a("/tasks/"+c.id+"/restart")} aria-label=${"Restart task "+c.id}>Restart</button></td></tr>`)}</tbody>
    </table></div>
    ${t.tasks.length===0&&i`<p class="muted">No tasks.</p>`}
    <${A} error=${r} />
    <button type="button" disabled=${s} onClick=${()=>a("/restart?includeTasks=true")}>Restart with tasks</button>
    ${u?i`<button type="button" disabled=${s} onClick=${()=>a("/resume")}>Resume</button>`:i`<button type="button" disabled=${s} onClick=${()=>a("/pause")}>Pause</button>`}
    <details><summary>Config</summary><table>${Object.keys(t.config).sort().map(c=>i`<tr key=${c}><td>${c}</td><td class="wrap">${t.config[c]}</td></tr>`)}</table></details>
  </div>`}function fe(){let[t,e,r]=I("/connect");return i`<section>
    <h1>Connectors</h1>
    <${N} data=${t} error=${e} />
    ${t&&!t.configured&&i`<p class="card" id="connect-none">No Kafka Connect worker is configured. Run the embedded worker with
      <code>strata server --set connect.enable=true</code>, or point the console at one with <code>--set console.connect.url=http://host:8083</code>.</p>`}
    ${t&&t.configured&&i`
      <p class="muted">Kafka Connect REST API at <code>${t.url}</code></p>
      <div class="stats">
        <${L} label="Connectors" value=${t.connectors.length} />
        <${L} label="Failed" value=${t.connectors.filter(o=>o.state==="FAILED"||o.tasks.some(s=>s.state==="FAILED")).length}
          warn=${t.connectors.some(o=>o.state==="FAILED"||o.tasks.some(s=>s.state==="FAILED"))} />
      </div>
      ${t.connectors.length===0&&i`<p class="muted">No connectors.</p>`}
      ${t.connectors.map(o=>i`<${Be} key=${o.name} c=${o} onChanged=${r} />`)}`}
  </section>`}function pe(t,e,r,o){return!t||e[r]===null||t[r]===null||o<=0?"—":((e[r]-t[r])/o).toFixed(1)+"/s"}function he(){let[t,e]=I("/streams"),r=Wt({at:0,jobs:{},prev:{},dt:0});if(t&&t!==r.current.data){let a=Date.now(),u=Object.fromEntries(t.jobs.map(c=>[c.name,c]));r.current={data:t,at:a,jobs:u,prev:r.current.jobs,dt:r.current.at?(a-r.current.at)/1e3:0}}let{prev:o,dt:s}=r.current,n=a=>a??"—";return i`<section>
    <h1>Stream jobs</h1>
    <${N} data=${t} error=${e} />
    ${t&&i`
      <p class="muted">${t.source==="jobs-dir"?"The jobs of this node's --jobs-dir.":"Groups whose members are stream jobs (jobs with no running instance are not listed)."}
        Records, errors and restarts count this node's instances. A job cannot be restarted from here: it restarts itself after an error, or restart its process.</p>
      <div class="scroll"><table id="jobs">
        <thead><tr><th>Job</th><th>Application id</th><th>State</th><th>Members</th><th>Lag</th><th>In</th><th>Out</th><th>In rate</th><th>Out rate</th><th>Errors</th><th>Restarts</th></tr></thead>
        <tbody>${t.jobs.map(a=>i`<tr key=${a.name} class=${a.errors>0||a.error?"warn":""}>
          <td>${a.name}</td><td><a href=${"#/groups/"+x(a.applicationId)}>${a.applicationId}</a></td>
          <td>${a.error||a.state}</td><td>${a.members}</td><td class=${a.lag>0?"lag":""}>${a.lag<0?"?":a.lag}</td>
          <td>${n(a.recordsIn)}</td><td>${n(a.recordsOut)}</td>
          <td>${pe(o[a.name],a,"recordsIn",s)}</td><td>${pe(o[a.name],a,"recordsOut",s)}</td>
          <td>${n(a.errors)}</td><td>${n(a.restarts)}</td></tr>`)}</tbody>
      </table></div>
      ${t.jobs.length===0&&i`<p class="muted">No stream jobs.</p>`}`}
  </section>`}var _e=["ALL","READ","WRITE","CREATE","DELETE","ALTER","DESCRIBE","CLUSTER_ACTION","DESCRIBE_CONFIGS","ALTER_CONFIGS","IDEMPOTENT_WRITE"],me=["TOPIC","GROUP","CLUSTER","TRANSACTIONAL_ID"],je=["producer_byte_rate","consumer_byte_rate","request_percentage","controller_mutation_rate","connection_creation_rate"];function bt(t){let[e,r]=_(null),[o,s]=_(!1);return[async a=>{r(null),s(!0);try{return await a(),t(),!0}catch(u){return r(u),!1}finally{s(!1)}},e,o]}var q=(t,e)=>i`${e&&i`<option value="">any</option>`}${t.map(r=>i`<option value=${r}>${r}</option>`)}`;function We(){let[t,e]=_({principal:"",resourceType:"",operation:""}),r=Object.entries(t).filter(([,h])=>h).map(([h,b])=>h+"="+x(b)).join("&"),[o,s,n]=I("/acls"+(r?"?"+r:"")),[a,u]=_({principal:"User:",host:"*",resourceType:"TOPIC",resourceName:"",patternType:"LITERAL",operation:"READ",permission:"ALLOW"}),[c,d,p]=bt(n),l=(h,b,g)=>$=>b({...h,[g]:$.target.value}),f=h=>{h.preventDefault(),c(()=>S("POST","/acls",a))};return i`
    <div class="toolbar">
      <label>Principal<input id="acl-filter-principal" value=${t.principal} onInput=${l(t,e,"principal")} placeholder="User:alice" /></label>
      <label>Resource<select value=${t.resourceType} onChange=${l(t,e,"resourceType")}>${q(me,!0)}</select></label>
      <label>Operation<select value=${t.operation} onChange=${l(t,e,"operation")}>${q(_e,!0)}</select></label>
    </div>
    <${N} data=${o} error=${s} />
    ${o&&!o.enabled&&i`<p class="card" id="acls-disabled">No authorizer is enabled on this cluster (<code>authorizer.class.name</code>): ACLs are not enforced.</p>`}
    ${o&&o.enabled&&i`
      <div class="scroll"><table id="acls">
        <thead><tr><th>Principal</th><th>Host</th><th>Resource</th><th>Pattern</th><th>Operation</th><th>Permission</th><th></th></tr></thead>
        <tbody>${o.acls.map(h=>i`<tr key=${JSON.stringify(h)}>
          <td>${h.principal}</td><td>${h.host}</td><td>${h.resourceType} <b>${h.resourceName}</b></td><td>${h.patternType}</td>
          <td>${h.operation}</td><td>${h.permission}</td>
          <td><button type="button" class="danger" disabled=${p} onClick=${()=>c(()=>S("DELETE","/acls",h))}>Remove</button></td></tr>`)}</tbody>
      </table></div>
      ${o.acls.length===0&&i`<p class="muted">No ACLs${r?" match":""}.</p>`}`}
    <form class="card" onSubmit=${f} aria-labelledby="add-acl">
      <h2 id="add-acl">Add an ACL</h2>
      <div class="fields">
        <label>Principal<input id="acl-principal" value=${a.principal} onInput=${l(a,u,"principal")} required /></label>
        <label>Host<input value=${a.host} onInput=${l(a,u,"host")} /></label>
        <label>Resource<select id="acl-resource-type" value=${a.resourceType} onChange=${l(a,u,"resourceType")}>${q(me)}</select></label>
        <label>Name<input id="acl-resource-name" value=${a.resourceName} onInput=${l(a,u,"resourceName")} disabled=${a.resourceType==="CLUSTER"} /></label>
        <label>Pattern<select value=${a.patternType} onChange=${l(a,u,"patternType")}>${q(["LITERAL","PREFIXED"])}</select></label>
        <label>Operation<select id="acl-operation" value=${a.operation} onChange=${l(a,u,"operation")}>${q(_e)}</select></label>
        <label>Permission<select value=${a.permission} onChange=${l(a,u,"permission")}>${q(["ALLOW","DENY"])}</select></label>
      </div>
      <${A} error=${d} />
      <button id="acl-submit" type="submit" disabled=${p}>Add ACL</button>
    </form>`}function ze(){let[t,e,r]=I("/users"),[o,s]=_(""),[n,a]=_(""),[u,c]=_("SCRAM-SHA-512"),[d,p]=_("8192"),[l,f,h]=bt(r),b=async g=>{g.preventDefault(),await l(()=>S("POST","/users",{user:o,password:n,mechanism:u,iterations:Number(d)}))&&(s(""),a(""))};return i`
    <${N} data=${t} error=${e} />
    ${t&&i`
      <div class="scroll"><table id="users">
        <thead><tr><th>User</th><th>Credentials</th><th></th></tr></thead>
        <tbody>${t.users.map(g=>i`<tr key=${g.user}>
          <td>${g.user}</td><td>${g.credentials.map($=>i`<div>${$.mechanism} · ${$.iterations} iterations</div>`)}</td>
          <td><button type="button" class="danger" disabled=${h} onClick=${()=>l(()=>S("DELETE","/users/"+x(g.user)))}>Remove</button></td></tr>`)}</tbody>
      </table></div>
      ${t.users.length===0&&i`<p class="muted">No SCRAM users.</p>`}`}
    <form class="card" onSubmit=${b} aria-labelledby="add-user">
      <h2 id="add-user">Add a user or change a password</h2>
      <div class="fields">
        <label>User<input id="user-name" value=${o} onInput=${g=>s(g.target.value)} required autocomplete="off" /></label>
        <label>Password<input id="user-password" type="password" value=${n} onInput=${g=>a(g.target.value)} required autocomplete="new-password" /></label>
        <label>Mechanism<select value=${u} onChange=${g=>c(g.target.value)}>${q(["SCRAM-SHA-256","SCRAM-SHA-512"])}</select></label>
        <label>Iterations<input type="number" min="4096" max="16384" value=${d} onInput=${g=>p(g.target.value)} /></label>
      </div>
      <${A} error=${f} />
      <button id="user-submit" type="submit" disabled=${h}>Save user</button>
    </form>`}var $e=t=>t.map(e=>`${e.type}=${e.name===null?"<default>":e.name}`).join(", ");function Ge(){let[t,e,r]=I("/quotas"),[o,s]=_({type:"user",name:"",key:"producer_byte_rate",value:"1048576"}),[n,a,u]=bt(r),c=p=>l=>s({...o,[p]:l.target.value}),d=p=>{p.preventDefault();let l=[{type:o.type,name:o.name===""?null:o.name}];n(()=>S("PUT","/quotas",{entity:l,values:{[o.key]:Number(o.value)}}))};return i`
    <${N} data=${t} error=${e} />
    ${t&&i`
      <div class="scroll"><table id="quotas">
        <thead><tr><th>Entity</th><th>Quota</th><th>Value</th><th></th></tr></thead>
        <tbody>${t.quotas.flatMap(p=>Object.keys(p.values).sort().map(l=>i`<tr key=${$e(p.entity)+l}>
          <td>${$e(p.entity)}</td><td>${l}</td><td>${p.values[l]}</td>
          <td><button type="button" class="danger" disabled=${u} onClick=${()=>n(()=>S("DELETE","/quotas",{entity:p.entity,keys:[l]}))}>Remove</button></td></tr>`))}</tbody>
      </table></div>
      ${t.quotas.length===0&&i`<p class="muted">No client quotas.</p>`}`}
    <form class="card" onSubmit=${d} aria-labelledby="set-quota">
      <h2 id="set-quota">Set a quota</h2>
      <div class="fields">
        <label>Entity<select value=${o.type} onChange=${c("type")}>${q(["user","client-id","ip"])}</select></label>
        <label>Name (empty: the default)<input id="quota-name" value=${o.name} onInput=${c("name")} /></label>
        <label>Quota<select value=${o.key} onChange=${c("key")}>${q(je)}</select></label>
        <label>Value<input id="quota-value" type="number" min="0" step="any" value=${o.value} onInput=${c("value")} /></label>
      </div>
      <${A} error=${a} />
      <button id="quota-submit" type="submit" disabled=${u}>Set quota</button>
    </form>`}function be({tab:t}){let e=[["acls","ACLs",We],["users","SCRAM users",ze],["quotas","Quotas",Ge]],r=e.find(s=>s[0]===t)||e[0],o=r[2];return i`<section>
    <h1>Security</h1>
    <nav class="tabs" aria-label="Security">${e.map(([s,n])=>i`<a href=${"#/security/"+s} aria-current=${s===r[0]?"page":void 0}>${n}</a>`)}</nav>
    <${o} />
  </section>`}function Ve(){let t=Xt(),e,r="cluster";t[0]==="topics"&&t[1]&&t[2]==="messages"?(e=i`<${ie} topic=${t[1]} />`,r="topics"):t[0]==="topics"&&t[1]?(e=i`<${le} name=${t[1]} />`,r="topics"):t[0]==="cluster"&&t[1]==="partitions"&&t[2]?e=i`<${ae} state=${t[2]} />`:t[0]==="topics"?(e=i`<${ne} />`,r="topics"):t[0]==="groups"&&t[1]?(e=i`<${ue} name=${t[1]} />`,r="groups"):t[0]==="groups"?(e=i`<${ce} />`,r="groups"):t[0]==="connect"?(e=i`<${fe} />`,r="connect"):t[0]==="jobs"?(e=i`<${he} />`,r="jobs"):t[0]==="security"?(e=i`<${be} tab=${t[1]||"acls"} />`,r="security"):e=i`<${oe} />`;let o=(s,n,a)=>i`<a href=${n} aria-current=${r===s?"page":void 0}>${a}</a>`;return i`<header>
      <a class="brand" href="#/">Strata</a>
      <nav aria-label="Main">${o("cluster","#/","Cluster")}${o("topics","#/topics","Topics")}${o("groups","#/groups","Groups")}${o("connect","#/connect","Connectors")}${o("jobs","#/jobs","Stream jobs")}${o("security","#/security","Security")}</nav>
    </header>
    <main>${e}</main>`}Rt(i`<${Ve} />`,document.getElementById("app"));})();
