(()=>{var J,y,bt,Gt,O,pt,vt,gt,$t,nt,et,rt,qt,F={},yt=[],Jt=/acit|ex(?:s|g|n|p|$)|rph|grid|ows|mnc|ntw|ine[ch]|zoo|^ord|itera/i,K=Array.isArray;function H(t,e){for(var r in e)t[r]=e[r];return t}function at(t){t&&t.parentNode&&t.parentNode.removeChild(t)}function it(t,e,r){var o,a,n,s={};for(n in e)n=="key"?o=e[n]:n=="ref"?a=e[n]:s[n]=e[n];if(arguments.length>2&&(s.children=arguments.length>3?J.call(arguments,2):r),typeof t=="function"&&t.defaultProps!=null)for(n in t.defaultProps)s[n]===void 0&&(s[n]=t.defaultProps[n]);return V(t,s,o,a,null)}function V(t,e,r,o,a){var n={type:t,props:e,key:r,ref:o,__k:null,__:null,__b:0,__e:null,__c:null,constructor:void 0,__v:a??++bt,__i:-1,__u:0};return a==null&&y.vnode!=null&&y.vnode(n),n}function Q(t){return t.children}function G(t,e){this.props=t,this.context=e}function M(t,e){if(e==null)return t.__?M(t.__,t.__i+1):null;for(var r;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null)return r.__e;return typeof t.type=="function"?M(t):null}function wt(t){var e,r;if((t=t.__)!=null&&t.__c!=null){for(t.__e=t.__c.base=null,e=0;e<t.__k.length;e++)if((r=t.__k[e])!=null&&r.__e!=null){t.__e=t.__c.base=r.__e;break}return wt(t)}}function ft(t){(!t.__d&&(t.__d=!0)&&O.push(t)&&!q.__r++||pt!=y.debounceRendering)&&((pt=y.debounceRendering)||vt)(q)}function q(){for(var t,e,r,o,a,n,s,l=1;O.length;)O.length>l&&O.sort(gt),t=O.shift(),l=O.length,t.__d&&(r=void 0,o=void 0,a=(o=(e=t).__v).__e,n=[],s=[],e.__P&&((r=H({},o)).__v=o.__v+1,y.vnode&&y.vnode(r),st(e.__P,r,o,e.__n,e.__P.namespaceURI,32&o.__u?[a]:null,n,a??M(o),!!(32&o.__u),s),r.__v=o.__v,r.__.__k[r.__i]=r,Ct(n,r,s),o.__e=o.__=null,r.__e!=a&&wt(r)));q.__r=0}function kt(t,e,r,o,a,n,s,l,u,c,_){var i,p,f,b,k,h,m,g=o&&o.__k||yt,P=e.length;for(u=Kt(r,e,g,u,P),i=0;i<P;i++)(f=r.__k[i])!=null&&(p=f.__i==-1?F:g[f.__i]||F,f.__i=i,h=st(t,f,p,a,n,s,l,u,c,_),b=f.__e,f.ref&&p.ref!=f.ref&&(p.ref&&lt(p.ref,null,f),_.push(f.ref,f.__c||b,f)),k==null&&b!=null&&(k=b),(m=!!(4&f.__u))||p.__k===f.__k?u=xt(f,u,t,m):typeof f.type=="function"&&h!==void 0?u=h:b&&(u=b.nextSibling),f.__u&=-7);return r.__e=k,u}function Kt(t,e,r,o,a){var n,s,l,u,c,_=r.length,i=_,p=0;for(t.__k=new Array(a),n=0;n<a;n++)(s=e[n])!=null&&typeof s!="boolean"&&typeof s!="function"?(u=n+p,(s=t.__k[n]=typeof s=="string"||typeof s=="number"||typeof s=="bigint"||s.constructor==String?V(null,s,null,null,null):K(s)?V(Q,{children:s},null,null,null):s.constructor==null&&s.__b>0?V(s.type,s.props,s.key,s.ref?s.ref:null,s.__v):s).__=t,s.__b=t.__b+1,l=null,(c=s.__i=Qt(s,r,u,i))!=-1&&(i--,(l=r[c])&&(l.__u|=2)),l==null||l.__v==null?(c==-1&&(a>_?p--:a<_&&p++),typeof s.type!="function"&&(s.__u|=4)):c!=u&&(c==u-1?p--:c==u+1?p++:(c>u?p--:p++,s.__u|=4))):t.__k[n]=null;if(i)for(n=0;n<_;n++)(l=r[n])!=null&&(2&l.__u)==0&&(l.__e==o&&(o=M(l)),St(l,l));return o}function xt(t,e,r,o){var a,n;if(typeof t.type=="function"){for(a=t.__k,n=0;a&&n<a.length;n++)a[n]&&(a[n].__=t,e=xt(a[n],e,r,o));return e}t.__e!=e&&(o&&(e&&t.type&&!e.parentNode&&(e=M(t)),r.insertBefore(t.__e,e||null)),e=t.__e);do e=e&&e.nextSibling;while(e!=null&&e.nodeType==8);return e}function Qt(t,e,r,o){var a,n,s,l=t.key,u=t.type,c=e[r],_=c!=null&&(2&c.__u)==0;if(c===null&&t.key==null||_&&l==c.key&&u==c.type)return r;if(o>(_?1:0)){for(a=r-1,n=r+1;a>=0||n<e.length;)if((c=e[s=a>=0?a--:n++])!=null&&(2&c.__u)==0&&l==c.key&&u==c.type)return s}return-1}function ht(t,e,r){e[0]=="-"?t.setProperty(e,r??""):t[e]=r==null?"":typeof r!="number"||Jt.test(e)?r:r+"px"}function B(t,e,r,o,a){var n,s;t:if(e=="style")if(typeof r=="string")t.style.cssText=r;else{if(typeof o=="string"&&(t.style.cssText=o=""),o)for(e in o)r&&e in r||ht(t.style,e,"");if(r)for(e in r)o&&r[e]==o[e]||ht(t.style,e,r[e])}else if(e[0]=="o"&&e[1]=="n")n=e!=(e=e.replace($t,"$1")),s=e.toLowerCase(),e=s in t||e=="onFocusOut"||e=="onFocusIn"?s.slice(2):e.slice(2),t.l||(t.l={}),t.l[e+n]=r,r?o?r.u=o.u:(r.u=nt,t.addEventListener(e,n?rt:et,n)):t.removeEventListener(e,n?rt:et,n);else{if(a=="http://www.w3.org/2000/svg")e=e.replace(/xlink(H|:h)/,"h").replace(/sName$/,"s");else if(e!="width"&&e!="height"&&e!="href"&&e!="list"&&e!="form"&&e!="tabIndex"&&e!="download"&&e!="rowSpan"&&e!="colSpan"&&e!="role"&&e!="popover"&&e in t)try{t[e]=r??"";break t}catch{}typeof r=="function"||(r==null||r===!1&&e[4]!="-"?t.removeAttribute(e):t.setAttribute(e,e=="popover"&&r==1?"":r))}}function mt(t){return function(e){if(this.l){var r=this.l[e.type+t];if(e.t==null)e.t=nt++;else if(e.t<r.u)return;return r(y.event?y.event(e):e)}}}function st(t,e,r,o,a,n,s,l,u,c){var _,i,p,f,b,k,h,m,g,P,S,T,D,v,E,A,tt,I=e.type;if(e.constructor!=null)return null;128&r.__u&&(u=!!(32&r.__u),n=[l=e.__e=r.__e]),(_=y.__b)&&_(e);t:if(typeof I=="function")try{if(m=e.props,g="prototype"in I&&I.prototype.render,P=(_=I.contextType)&&o[_.__c],S=_?P?P.props.value:_.__:o,r.__c?h=(i=e.__c=r.__c).__=i.__E:(g?e.__c=i=new I(m,S):(e.__c=i=new G(m,S),i.constructor=I,i.render=Yt),P&&P.sub(i),i.props=m,i.state||(i.state={}),i.context=S,i.__n=o,p=i.__d=!0,i.__h=[],i._sb=[]),g&&i.__s==null&&(i.__s=i.state),g&&I.getDerivedStateFromProps!=null&&(i.__s==i.state&&(i.__s=H({},i.__s)),H(i.__s,I.getDerivedStateFromProps(m,i.__s))),f=i.props,b=i.state,i.__v=e,p)g&&I.getDerivedStateFromProps==null&&i.componentWillMount!=null&&i.componentWillMount(),g&&i.componentDidMount!=null&&i.__h.push(i.componentDidMount);else{if(g&&I.getDerivedStateFromProps==null&&m!==f&&i.componentWillReceiveProps!=null&&i.componentWillReceiveProps(m,S),!i.__e&&i.shouldComponentUpdate!=null&&i.shouldComponentUpdate(m,i.__s,S)===!1||e.__v==r.__v){for(e.__v!=r.__v&&(i.props=m,i.state=i.__s,i.__d=!1),e.__e=r.__e,e.__k=r.__k,e.__k.some(function(L){L&&(L.__=e)}),T=0;T<i._sb.length;T++)i.__h.push(i._sb[T]);i._sb=[],i.__h.length&&s.push(i);break t}i.componentWillUpdate!=null&&i.componentWillUpdate(m,i.__s,S),g&&i.componentDidUpdate!=null&&i.__h.push(function(){i.componentDidUpdate(f,b,k)})}if(i.context=S,i.props=m,i.__P=t,i.__e=!1,D=y.__r,v=0,g){for(i.state=i.__s,i.__d=!1,D&&D(e),_=i.render(i.props,i.state,i.context),E=0;E<i._sb.length;E++)i.__h.push(i._sb[E]);i._sb=[]}else do i.__d=!1,D&&D(e),_=i.render(i.props,i.state,i.context),i.state=i.__s;while(i.__d&&++v<25);i.state=i.__s,i.getChildContext!=null&&(o=H(H({},o),i.getChildContext())),g&&!p&&i.getSnapshotBeforeUpdate!=null&&(k=i.getSnapshotBeforeUpdate(f,b)),A=_,_!=null&&_.type===Q&&_.key==null&&(A=Pt(_.props.children)),l=kt(t,K(A)?A:[A],e,r,o,a,n,s,l,u,c),i.base=e.__e,e.__u&=-161,i.__h.length&&s.push(i),h&&(i.__E=i.__=null)}catch(L){if(e.__v=null,u||n!=null)if(L.then){for(e.__u|=u?160:128;l&&l.nodeType==8&&l.nextSibling;)l=l.nextSibling;n[n.indexOf(l)]=null,e.__e=l}else{for(tt=n.length;tt--;)at(n[tt]);ot(e)}else e.__e=r.__e,e.__k=r.__k,L.then||ot(e);y.__e(L,e,r)}else n==null&&e.__v==r.__v?(e.__k=r.__k,e.__e=r.__e):l=e.__e=Xt(r.__e,e,r,o,a,n,s,u,c);return(_=y.diffed)&&_(e),128&e.__u?void 0:l}function ot(t){t&&t.__c&&(t.__c.__e=!0),t&&t.__k&&t.__k.forEach(ot)}function Ct(t,e,r){for(var o=0;o<r.length;o++)lt(r[o],r[++o],r[++o]);y.__c&&y.__c(e,t),t.some(function(a){try{t=a.__h,a.__h=[],t.some(function(n){n.call(a)})}catch(n){y.__e(n,a.__v)}})}function Pt(t){return typeof t!="object"||t==null||t.__b&&t.__b>0?t:K(t)?t.map(Pt):H({},t)}function Xt(t,e,r,o,a,n,s,l,u){var c,_,i,p,f,b,k,h=r.props,m=e.props,g=e.type;if(g=="svg"?a="http://www.w3.org/2000/svg":g=="math"?a="http://www.w3.org/1998/Math/MathML":a||(a="http://www.w3.org/1999/xhtml"),n!=null){for(c=0;c<n.length;c++)if((f=n[c])&&"setAttribute"in f==!!g&&(g?f.localName==g:f.nodeType==3)){t=f,n[c]=null;break}}if(t==null){if(g==null)return document.createTextNode(m);t=document.createElementNS(a,g,m.is&&m),l&&(y.__m&&y.__m(e,n),l=!1),n=null}if(g==null)h===m||l&&t.data==m||(t.data=m);else{if(n=n&&J.call(t.childNodes),h=r.props||F,!l&&n!=null)for(h={},c=0;c<t.attributes.length;c++)h[(f=t.attributes[c]).name]=f.value;for(c in h)if(f=h[c],c!="children"){if(c=="dangerouslySetInnerHTML")i=f;else if(!(c in m)){if(c=="value"&&"defaultValue"in m||c=="checked"&&"defaultChecked"in m)continue;B(t,c,null,f,a)}}for(c in m)f=m[c],c=="children"?p=f:c=="dangerouslySetInnerHTML"?_=f:c=="value"?b=f:c=="checked"?k=f:l&&typeof f!="function"||h[c]===f||B(t,c,f,h[c],a);if(_)l||i&&(_.__html==i.__html||_.__html==t.innerHTML)||(t.innerHTML=_.__html),e.__k=[];else if(i&&(t.innerHTML=""),kt(e.type=="template"?t.content:t,K(p)?p:[p],e,r,o,g=="foreignObject"?"http://www.w3.org/1999/xhtml":a,n,s,n?n[0]:r.__k&&M(r,0),l,u),n!=null)for(c=n.length;c--;)at(n[c]);l||(c="value",g=="progress"&&b==null?t.removeAttribute("value"):b!=null&&(b!==t[c]||g=="progress"&&!b||g=="option"&&b!=h[c])&&B(t,c,b,h[c],a),c="checked",k!=null&&k!=t[c]&&B(t,c,k,h[c],a))}return t}function lt(t,e,r){try{if(typeof t=="function"){var o=typeof t.__u=="function";o&&t.__u(),o&&e==null||(t.__u=t(e))}else t.current=e}catch(a){y.__e(a,r)}}function St(t,e,r){var o,a;if(y.unmount&&y.unmount(t),(o=t.ref)&&(o.current&&o.current!=t.__e||lt(o,null,e)),(o=t.__c)!=null){if(o.componentWillUnmount)try{o.componentWillUnmount()}catch(n){y.__e(n,e)}o.base=o.__P=null}if(o=t.__k)for(a=0;a<o.length;a++)o[a]&&St(o[a],e,r||typeof t.type!="function");r||at(t.__e),t.__c=t.__=t.__e=void 0}function Yt(t,e,r){return this.constructor(t,r)}function Et(t,e,r){var o,a,n,s;e==document&&(e=document.documentElement),y.__&&y.__(t,e),a=(o=typeof r=="function")?null:r&&r.__k||e.__k,n=[],s=[],st(e,t=(!o&&r||e).__k=it(Q,null,[t]),a||F,F,e.namespaceURI,!o&&r?[r]:a?null:e.firstChild?J.call(e.childNodes):null,n,!o&&r?r:a?a.__e:e.firstChild,o,s),Ct(n,t,s)}J=yt.slice,y={__e:function(t,e,r,o){for(var a,n,s;e=e.__;)if((a=e.__c)&&!a.__)try{if((n=a.constructor)&&n.getDerivedStateFromError!=null&&(a.setState(n.getDerivedStateFromError(t)),s=a.__d),a.componentDidCatch!=null&&(a.componentDidCatch(t,o||{}),s=a.__d),s)return a.__E=a}catch(l){t=l}throw t}},bt=0,Gt=function(t){return t!=null&&t.constructor==null},G.prototype.setState=function(t,e){var r;r=this.__s!=null&&this.__s!=this.state?this.__s:this.__s=H({},this.state),typeof t=="function"&&(t=t(H({},r),this.props)),t&&H(r,t),t!=null&&this.__v&&(e&&this._sb.push(e),ft(this))},G.prototype.forceUpdate=function(t){this.__v&&(this.__e=!0,t&&this.__h.push(t),ft(this))},G.prototype.render=Q,O=[],vt=typeof Promise=="function"?Promise.prototype.then.bind(Promise.resolve()):setTimeout,gt=function(t,e){return t.__v.__b-e.__v.__b},q.__r=0,$t=/(PointerCapture)$|Capture$/i,nt=0,et=mt(!1),rt=mt(!0),qt=0;var z,w,ct,Tt,Y=0,Rt=[],x=y,It=x.__b,Nt=x.__r,Ht=x.diffed,Dt=x.__c,Ot=x.unmount,Lt=x.__;function _t(t,e){x.__h&&x.__h(w,t,Y||e),Y=0;var r=w.__H||(w.__H={__:[],__h:[]});return t>=r.__.length&&r.__.push({}),r.__[t]}function $(t){return Y=1,Zt(Ft,t)}function Zt(t,e,r){var o=_t(z++,2);if(o.t=t,!o.__c&&(o.__=[r?r(e):Ft(void 0,e),function(l){var u=o.__N?o.__N[0]:o.__[0],c=o.t(u,l);u!==c&&(o.__N=[c,o.__[1]],o.__c.setState({}))}],o.__c=w,!w.__f)){var a=function(l,u,c){if(!o.__c.__H)return!0;var _=o.__c.__H.__.filter(function(p){return!!p.__c});if(_.every(function(p){return!p.__N}))return!n||n.call(this,l,u,c);var i=o.__c.props!==l;return _.forEach(function(p){if(p.__N){var f=p.__[0];p.__=p.__N,p.__N=void 0,f!==p.__[0]&&(i=!0)}}),n&&n.call(this,l,u,c)||i};w.__f=!0;var n=w.shouldComponentUpdate,s=w.componentWillUpdate;w.componentWillUpdate=function(l,u,c){if(this.__e){var _=n;n=void 0,a(l,u,c),n=_}s&&s.call(this,l,u,c)},w.shouldComponentUpdate=a}return o.__N||o.__}function Z(t,e){var r=_t(z++,3);!x.__s&&At(r.__H,e)&&(r.__=t,r.u=e,w.__H.__h.push(r))}function te(t,e){var r=_t(z++,7);return At(r.__H,e)&&(r.__=t(),r.__H=e,r.__h=t),r.__}function Ut(t,e){return Y=8,te(function(){return t},e)}function ee(){for(var t;t=Rt.shift();)if(t.__P&&t.__H)try{t.__H.__h.forEach(X),t.__H.__h.forEach(ut),t.__H.__h=[]}catch(e){t.__H.__h=[],x.__e(e,t.__v)}}x.__b=function(t){w=null,It&&It(t)},x.__=function(t,e){t&&e.__k&&e.__k.__m&&(t.__m=e.__k.__m),Lt&&Lt(t,e)},x.__r=function(t){Nt&&Nt(t),z=0;var e=(w=t.__c).__H;e&&(ct===w?(e.__h=[],w.__h=[],e.__.forEach(function(r){r.__N&&(r.__=r.__N),r.u=r.__N=void 0})):(e.__h.forEach(X),e.__h.forEach(ut),e.__h=[],z=0)),ct=w},x.diffed=function(t){Ht&&Ht(t);var e=t.__c;e&&e.__H&&(e.__H.__h.length&&(Rt.push(e)!==1&&Tt===x.requestAnimationFrame||((Tt=x.requestAnimationFrame)||re)(ee)),e.__H.__.forEach(function(r){r.u&&(r.__H=r.u),r.u=void 0})),ct=w=null},x.__c=function(t,e){e.some(function(r){try{r.__h.forEach(X),r.__h=r.__h.filter(function(o){return!o.__||ut(o)})}catch(o){e.some(function(a){a.__h&&(a.__h=[])}),e=[],x.__e(o,r.__v)}}),Dt&&Dt(t,e)},x.unmount=function(t){Ot&&Ot(t);var e,r=t.__c;r&&r.__H&&(r.__H.__.forEach(function(o){try{X(o)}catch(a){e=a}}),r.__H=void 0,e&&x.__e(e,r.__v))};var Mt=typeof requestAnimationFrame=="function";function re(t){var e,r=function(){clearTimeout(o),Mt&&cancelAnimationFrame(e),setTimeout(t)},o=setTimeout(r,35);Mt&&(e=requestAnimationFrame(r))}function X(t){var e=w,r=t.__c;typeof r=="function"&&(t.__c=void 0,r()),w=e}function ut(t){var e=w;t.__c=t.__(),w=e}function At(t,e){return!t||t.length!==e.length||e.some(function(r,o){return r!==t[o]})}function Ft(t,e){return typeof e=="function"?e(t):e}var Wt=function(t,e,r,o){var a;e[0]=0;for(var n=1;n<e.length;n++){var s=e[n++],l=e[n]?(e[0]|=s?1:2,r[e[n++]]):e[++n];s===3?o[0]=l:s===4?o[1]=Object.assign(o[1]||{},l):s===5?(o[1]=o[1]||{})[e[++n]]=l:s===6?o[1][e[++n]]+=l+"":s?(a=t.apply(l,Wt(t,l,r,["",null])),o.push(a),l[0]?e[0]|=2:(e[n-2]=0,e[n]=a)):o.push(l)}return o},zt=new Map;function jt(t){var e=zt.get(this);return e||(e=new Map,zt.set(this,e)),(e=Wt(this,e.get(t)||(e.set(t,e=(function(r){for(var o,a,n=1,s="",l="",u=[0],c=function(p){n===1&&(p||(s=s.replace(/^\s*\n\s*|\s*\n\s*$/g,"")))?u.push(0,p,s):n===3&&(p||s)?(u.push(3,p,s),n=2):n===2&&s==="..."&&p?u.push(4,p,0):n===2&&s&&!p?u.push(5,0,!0,s):n>=5&&((s||!p&&n===5)&&(u.push(n,0,s,a),n=6),p&&(u.push(n,p,0,a),n=6)),s=""},_=0;_<r.length;_++){_&&(n===1&&c(),c(_));for(var i=0;i<r[_].length;i++)o=r[_][i],n===1?o==="<"?(c(),u=[u],n=3):s+=o:n===4?s==="--"&&o===">"?(n=1,s=""):s=o+s[0]:l?o===l?l="":s+=o:o==='"'||o==="'"?l=o:o===">"?(c(),n=1):n&&(o==="="?(n=5,a=s,s=""):o==="/"&&(n<5||r[_][i+1]===">")?(c(),n===3&&(u=u[0]),n=u,(u=u[0]).push(2,0,n),n=0):o===" "||o==="	"||o===`
`||o==="\r"?(c(),n=2):s+=o),n===3&&s==="!--"&&(n=4,u=u[0])}return c(),u})(t)),e),arguments,[])).length>1?e:e[0]}var d=jt.bind(it),oe=5e3;async function R(t,e,r){let o={method:t,headers:{}};t!=="GET"&&(o.headers["X-Strata-Console"]="1"),r!==void 0&&(o.headers["Content-Type"]="application/json",o.body=JSON.stringify(r));let a=await fetch("/api/v1"+e,o);if(a.status===204)return null;let n=null;try{n=await a.json()}catch{}if(!a.ok){let s=n&&n.error?n.error:a.status+" "+a.statusText,l=new Error(s);throw l.code=n&&n.code,l}return n}function U(t,e=!0){let[r,o]=$({data:null,error:null}),a=Ut(()=>{t&&R("GET",t).then(n=>o({data:n,error:null}),n=>o(s=>({data:s.data,error:n})))},[t]);return Z(()=>{if(o({data:null,error:null}),a(),!e)return;let n=setInterval(a,oe);return()=>clearInterval(n)},[a,e]),[r.data,r.error,a]}function ne(){let[t,e]=$(location.hash);return Z(()=>{let r=()=>e(location.hash);return addEventListener("hashchange",r),()=>removeEventListener("hashchange",r)},[]),(t.replace(/^#/,"")||"/").split("/").filter(Boolean).map(decodeURIComponent)}var C=encodeURIComponent;function W({error:t}){return t?d`<p class="error" role="alert">${t.message}${t.code?d` <code>${t.code}</code>`:""}</p>`:null}function j({data:t,error:e}){return t?null:e?d`<${W} error=${e} />`:d`<p class="muted">Loading…</p>`}function N({label:t,value:e,warn:r}){return d`<div class=${"stat"+(r?" warn":"")}><span class="stat-value">${e}</span><span class="stat-label">${t}</span></div>`}function ae(){let[t,e]=U("/cluster");return d`<section>
    <h1>Cluster</h1>
    <${j} data=${t} error=${e} />
    ${t&&d`
      <p class="muted">Cluster id <code>${t.clusterId}</code> · served by node ${t.node}</p>
      <div class="stats">
        <${N} label="Brokers" value=${t.brokers.length} />
        <${N} label="Controller" value=${t.controller} />
        <${N} label="Topics" value=${t.topics} />
        <${N} label="Partitions" value=${t.partitions} />
        <${N} label="Under-replicated" value=${t.underReplicatedPartitions} warn=${t.underReplicatedPartitions>0} />
        <${N} label="Offline" value=${t.offlinePartitions} warn=${t.offlinePartitions>0} />
      </div>
      <h2>Brokers</h2>
      <div class="scroll"><table>
        <thead><tr><th>Node</th><th>Address</th><th>Rack</th><th>Role</th></tr></thead>
        <tbody>${t.brokers.map(r=>d`<tr key=${r.nodeId}>
          <td>${r.nodeId}</td><td>${r.host}:${r.port}</td><td>${r.rack||"—"}</td>
          <td>${r.nodeId===t.controller?"controller":"broker"}</td></tr>`)}</tbody>
      </table></div>`}
  </section>`}var ie=/^[a-zA-Z0-9._-]{1,249}$/;function Bt(t,e){let r=[];for(let o of t.split(`
`)){if(!o.trim())continue;let a=o.indexOf(e);if(a<1)throw new Error(`"${o}" is not key${e}value`);r.push([o.slice(0,a).trim(),o.slice(a+1).trim()])}return r}function se({onCreated:t}){let[e,r]=$(""),[o,a]=$("1"),[n,s]=$("1"),[l,u]=$(""),[c,_]=$(null),[i,p]=$(!1);return d`<form class="card" onSubmit=${async b=>{b.preventDefault(),_(null);try{if(!ie.test(e)||e==="."||e==="..")throw new Error('Topic names use 1 to 249 of: letters, digits, ".", "_", "-".');let k=Number(o),h=Number(n);if(!Number.isInteger(k)||k<1)throw new Error("Partitions must be a whole number of at least 1.");if(!Number.isInteger(h)||h<1)throw new Error("Replication factor must be a whole number of at least 1.");let m=Object.fromEntries(Bt(l,"="));p(!0),await R("POST","/topics",{name:e,partitions:k,replicationFactor:h,configs:m}),r(""),t(e)}catch(k){_(k)}finally{p(!1)}}} aria-labelledby="create-topic">
    <h2 id="create-topic">Create a topic</h2>
    <div class="fields">
      <label>Name<input id="new-topic-name" value=${e} onInput=${b=>r(b.target.value)} required /></label>
      <label>Partitions<input id="new-topic-partitions" type="number" min="1" value=${o} onInput=${b=>a(b.target.value)} /></label>
      <label>Replication factor<input id="new-topic-rf" type="number" min="1" value=${n} onInput=${b=>s(b.target.value)} /></label>
    </div>
    <label><span>Configs (one <code>name=value</code> per line)</span><textarea rows="2" value=${l} onInput=${b=>u(b.target.value)} placeholder="retention.ms=86400000"></textarea></label>
    <${W} error=${c} />
    <button id="create-topic-submit" type="submit" disabled=${i}>Create topic</button>
  </form>`}function le(){let[t,e]=$(""),[r,o]=$(1),[a,n]=$(null),s=25,[l,u,c]=U(`/topics?search=${C(t)}&page=${r}&pageSize=${s}`),_=l?Math.max(1,Math.ceil(l.total/s)):1;return d`<section>
    <h1>Topics</h1>
    <div class="toolbar">
      <label class="search">Search<input type="search" id="topic-search" value=${t}
        onInput=${i=>{e(i.target.value),o(1)}} placeholder="name contains…" /></label>
    </div>
    <${j} data=${l} error=${u} />
    ${l&&d`
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Partitions</th><th>Replication</th><th></th></tr></thead>
        <tbody>${l.topics.map(i=>d`<tr key=${i.name}>
          <td><a href=${"#/topics/"+C(i.name)}>${i.name}</a>${i.internal?d` <span class="badge">internal</span>`:""}</td>
          <td>${i.partitions}</td><td>${i.replicationFactor}</td>
          <td><a href=${"#/topics/"+C(i.name)+"/messages"}>Messages</a></td></tr>`)}</tbody>
      </table></div>
      ${l.topics.length===0&&d`<p class="muted">No topics${t?" match":""}.</p>`}
      <nav class="pager" aria-label="Topic pages">
        <button type="button" disabled=${r<=1} onClick=${()=>o(r-1)}>Previous</button>
        <span>Page ${r} of ${_} · ${l.total} topics</span>
        <button type="button" disabled=${r>=_} onClick=${()=>o(r+1)}>Next</button>
      </nav>`}
    ${a&&d`<p class="ok" role="status">Created <a href=${"#/topics/"+C(a)}>${a}</a>.</p>`}
    <${se} onCreated=${i=>{n(i),c()}} />
  </section>`}function Vt({what:t,name:e,onDelete:r}){let[o,a]=$(!1),[n,s]=$(""),[l,u]=$(null);return o?d`<form class="card danger-zone" onSubmit=${async _=>{_.preventDefault();try{await r()}catch(i){u(i)}}}>
    <label><span>Type <code>${e}</code> to delete this ${t}</span><input value=${n} onInput=${_=>s(_.target.value)} /></label>
    <${W} error=${l} />
    <button type="submit" class="danger" disabled=${n!==e}>Delete ${t} ${e}</button>
    <button type="button" onClick=${()=>a(!1)}>Cancel</button>
  </form>`:d`<button type="button" class="danger" onClick=${()=>a(!0)}>Delete ${t}…</button>`}function ce({name:t}){let[e,r]=U("/topics/"+C(t)),o=async()=>{await R("DELETE","/topics/"+C(t)),location.hash="#/topics"};return d`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <h1>${t}</h1>
    <${j} data=${e} error=${r} />
    ${e&&d`
      <p><a class="button" href=${"#/topics/"+C(t)+"/messages"}>Browse messages</a></p>
      <h2>Partitions</h2>
      <div class="scroll"><table>
        <thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Log start</th><th>High watermark</th><th>Records</th></tr></thead>
        <tbody>${e.partitions.map(a=>d`<tr key=${a.partition} class=${a.isr.length<a.replicas.length?"warn":""}>
          <td>${a.partition}</td><td>${a.leader<0?"none":a.leader}</td><td>${a.replicas.join(", ")}</td><td>${a.isr.join(", ")}</td>
          <td>${a.logStartOffset}</td><td>${a.highWatermark}</td><td>${Math.max(0,a.highWatermark-a.logStartOffset)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Configs</h2>
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Value</th><th>Source</th></tr></thead>
        <tbody>${e.configs.map(a=>d`<tr key=${a.name} class=${a.source==="DYNAMIC_TOPIC_CONFIG"?"set":""}>
          <td>${a.name}</td><td class="wrap">${a.sensitive?"(sensitive)":a.value??"—"}</td><td>${a.source}</td></tr>`)}</tbody>
      </table></div>
      ${!e.internal&&d`<${Vt} what="topic" name=${t} onDelete=${o} />`}`}
  </section>`}function ue(t){return t.encoding==="base64"?Uint8Array.from(atob(t.data),e=>e.charCodeAt(0)):new TextEncoder().encode(t.data)}function dt(t,e){return t==null?d`<span class="muted">null</span>`:e==="hex"?[...ue(t)].map(r=>r.toString(16).padStart(2,"0")).join(" "):t.encoding==="base64"?d`<span class="badge">base64</span> ${t.data}`:e==="json"&&t.json?d`<pre>${JSON.stringify(JSON.parse(t.data),null,2)}</pre>`:t.data}function _e({topic:t,partitions:e,onProduced:r}){let[o,a]=$(""),[n,s]=$(""),[l,u]=$(""),[c,_]=$(""),[i,p]=$(null),[f,b]=$(null);return d`<form class="card" onSubmit=${async h=>{h.preventDefault(),b(null),p(null);try{let m={key:n===""?null:{data:n},value:{data:l},headers:Bt(c,":").map(([P,S])=>({key:P,value:{data:S}}))};o!==""&&(m.partition=Number(o));let g=await R("POST","/topics/"+C(t)+"/records",m);p(g),r(g)}catch(m){b(m)}}} aria-labelledby="produce">
    <h2 id="produce">Produce a record</h2>
    <div class="fields">
      <label>Partition<select id="produce-partition" value=${o} onChange=${h=>a(h.target.value)}>
        <option value="">by key</option>
        ${Array.from({length:e},(h,m)=>d`<option value=${m}>${m}</option>`)}
      </select></label>
      <label>Key<input id="produce-key" value=${n} onInput=${h=>s(h.target.value)} placeholder="(none)" /></label>
    </div>
    <label>Value<textarea id="produce-value" rows="3" value=${l} onInput=${h=>u(h.target.value)}></textarea></label>
    <label><span>Headers (one <code>name: value</code> per line)</span><textarea rows="2" value=${c} onInput=${h=>_(h.target.value)}></textarea></label>
    <${W} error=${f} />
    ${i&&d`<p class="ok" role="status" id="produce-result">Produced to partition ${i.partition} at offset ${i.offset}.</p>`}
    <button id="produce-submit" type="submit">Produce</button>
  </form>`}function de({topic:t}){let[e]=U("/topics/"+C(t),!1),[r,o]=$("0"),[a,n]=$("start"),[s,l]=$("0"),[u,c]=$(""),[_,i]=$("50"),[p,f]=$("text"),[b,k]=$(null),[h,m]=$(null),[g,P]=$(null),S=()=>{let v=`?partition=${r}&limit=${_}`;return a==="offset"&&(v+="&offset="+C(s)),a==="time"&&(v+="&timestamp="+(u?new Date(u).getTime():0)),a==="end"&&(v+="&fromEnd=true"),v},T=v=>{k(v),R("GET","/topics/"+C(t)+"/records"+v).then(E=>{m(E),P(null)},P)};Z(()=>{T(S())},[t]);let D=h&&h.nextOffset<h.highWatermark;return d`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> / <a href=${"#/topics/"+C(t)}>${t}</a> /</p>
    <h1>Messages</h1>
    <form class="card" onSubmit=${v=>{v.preventDefault(),T(S())}}>
      <div class="fields">
        <label>Partition<select id="browse-partition" value=${r} onChange=${v=>o(v.target.value)}>
          ${Array.from({length:e?e.partitions.length:1},(v,E)=>d`<option value=${E}>${E}</option>`)}
        </select></label>
        <label>From<select id="browse-from" value=${a} onChange=${v=>n(v.target.value)}>
          <option value="start">the log start</option><option value="offset">an offset</option>
          <option value="time">a time</option><option value="end">the end</option>
        </select></label>
        ${a==="offset"&&d`<label>Offset<input type="number" min="0" value=${s} onInput=${v=>l(v.target.value)} /></label>`}
        ${a==="time"&&d`<label>Time<input type="datetime-local" value=${u} onInput=${v=>c(v.target.value)} /></label>`}
        <label>Limit<input type="number" min="1" max="500" value=${_} onInput=${v=>i(v.target.value)} /></label>
        <label>Decode as<select id="browse-decode" value=${p} onChange=${v=>f(v.target.value)}>
          <option value="text">text</option><option value="json">JSON (pretty)</option><option value="hex">hex</option>
        </select></label>
      </div>
      <button type="submit" id="browse-submit">Load</button>
      ${b&&d` <button type="button" onClick=${()=>T(b)}>Refresh</button>`}
    </form>
    <${W} error=${g} />
    ${h&&d`
      <p class="muted">Partition ${h.partition}: offsets ${h.logStartOffset} to ${h.highWatermark-1}; showing ${h.records.length} from ${h.startOffset}.</p>
      <div class="scroll"><table class="records">
        <thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${h.records.map(v=>d`<tr key=${v.offset}>
          <td>${v.offset}</td><td>${new Date(v.timestamp).toISOString()}</td>
          <td class="wrap">${dt(v.key,p)}</td><td class="wrap value">${dt(v.value,p)}</td>
          <td class="wrap">${v.headers.map(E=>d`<div><b>${E.key}</b>: ${dt(E.value,p)}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${h.records.length===0&&d`<p class="muted">No records there.</p>`}
      ${D&&d`<button type="button" onClick=${()=>T(`?partition=${h.partition}&limit=${_}&offset=${h.nextOffset}`)}>Next records</button>`}`}
    ${e&&d`<${_e} topic=${t} partitions=${e.partitions.length} onProduced=${()=>b&&T(b)} />`}
  </section>`}function pe(){let[t,e]=U("/groups");return d`<section>
    <h1>Consumer groups</h1>
    <${j} data=${t} error=${e} />
    ${t&&d`
      <div class="scroll"><table>
        <thead><tr><th>Group</th><th>State</th><th>Protocol</th><th>Coordinator</th></tr></thead>
        <tbody>${t.groups.map(r=>d`<tr key=${r.group}>
          <td><a href=${"#/groups/"+C(r.group)}>${r.group}</a></td><td>${r.state}</td><td>${r.protocolType||"—"}</td><td>${r.coordinator}</td></tr>`)}</tbody>
      </table></div>
      ${t.groups.length===0&&d`<p class="muted">No groups.</p>`}`}
  </section>`}function fe({name:t}){let[e,r]=U("/groups/"+C(t)),o=async()=>{await R("DELETE","/groups/"+C(t)),location.hash="#/groups"};return d`<section>
    <p class="crumbs"><a href="#/groups">Consumer groups</a> /</p>
    <h1>${t}</h1>
    <${j} data=${e} error=${r} />
    ${e&&d`
      <div class="stats">
        <${N} label="State" value=${e.state} />
        <${N} label="Members" value=${e.members.length} />
        <${N} label="Total lag" value=${e.totalLag} warn=${e.totalLag>0} />
        <${N} label="Coordinator" value=${e.coordinator} />
      </div>
      <h2>Lag per partition</h2>
      <div class="scroll"><table id="group-lag">
        <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>Log end</th><th>Lag</th><th>Member</th></tr></thead>
        <tbody>${e.offsets.map(a=>d`<tr key=${a.topic+"/"+a.partition}>
          <td><a href=${"#/topics/"+C(a.topic)}>${a.topic}</a></td><td>${a.partition}</td>
          <td>${a.committedOffset<0?"—":a.committedOffset}</td><td>${a.logEndOffset}</td>
          <td class=${a.lag>0?"lag":""}>${a.lag<0?"?":a.lag}</td><td class="wrap">${a.memberId||"—"}</td></tr>`)}</tbody>
      </table></div>
      <h2>Members</h2>
      <div class="scroll"><table>
        <thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Assigned</th></tr></thead>
        <tbody>${e.members.map(a=>d`<tr key=${a.memberId}>
          <td class="wrap">${a.memberId}</td><td>${a.clientId}</td><td>${a.clientHost}</td>
          <td>${a.assigned.map(n=>d`<div>${n.topic}: ${n.partitions.join(", ")}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${e.members.length===0&&d`<p class="muted">No members.</p>`}
      <${Vt} what="group" name=${t} onDelete=${o} />`}
  </section>`}function he(){let t=ne(),e,r="cluster";t[0]==="topics"&&t[1]&&t[2]==="messages"?(e=d`<${de} topic=${t[1]} />`,r="topics"):t[0]==="topics"&&t[1]?(e=d`<${ce} name=${t[1]} />`,r="topics"):t[0]==="topics"?(e=d`<${le} />`,r="topics"):t[0]==="groups"&&t[1]?(e=d`<${fe} name=${t[1]} />`,r="groups"):t[0]==="groups"?(e=d`<${pe} />`,r="groups"):e=d`<${ae} />`;let o=(a,n,s)=>d`<a href=${n} aria-current=${r===a?"page":void 0}>${s}</a>`;return d`<header>
      <a class="brand" href="#/">Strata</a>
      <nav aria-label="Main">${o("cluster","#/","Cluster")}${o("topics","#/topics","Topics")}${o("groups","#/groups","Groups")}</nav>
    </header>
    <main>${e}</main>`}Et(d`<${he} />`,document.getElementById("app"));})();
