#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/wrenfield/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["wrenfield/home-delivery-guide"] = (
    "Home Delivery Service: a guide for customers and whanau",
    "Wrenfield Libraries - Home Delivery Service guide - updated 2 February 2026",
    """
# Home Delivery Service
A guide for customers, whanau and carers.
Wrenfield Libraries, updated 2 February 2026.

1. WHO CAN USE THE SERVICE
Home Delivery is a free service for people in the Wrenfield District who
can't get to a library for 3 months or more because of age, illness,
disability or caring for someone else. It is also available to rest homes
and retirement villages, which receive one shared delivery for their
residents. You need a Wrenfield library card; we can set one up for you
at your first visit.

2. HOW IT WORKS
A member of our team or a trained volunteer visits you once every 4 weeks.
They bring up to 15 items chosen for you and collect the items from your
last visit. You keep your items until the next delivery, so there are no
due dates to remember and no charges if a visit is late.

You tell us what you like to read or listen to, and we choose for you,
or you can ask for particular titles. Large print books, audiobooks on CD
and MP3 players, DVDs, magazines and jigsaw puzzles can all be delivered.
Rentals on DVDs are free for Home Delivery customers.

Our volunteers always carry a Wrenfield District Council photo ID badge.
If someone visits without one, please don't open the door, and call us.

3. DELIVERY ROUNDS
Deliveries follow a 4-week cycle. Your round depends on where you live.

Area                            Week of cycle   Day          Time
Central and Ashby               Week 1          Tuesday      10am-3pm
Harbourside and Quay Point      Week 2          Wednesday    10am-3pm
Millbrook and rural north       Week 3          Thursday     9am-2pm
Pohutukawa Bay and rural south  Week 4          Tuesday      9am-1pm
Rest homes and villages         Week 2          Friday       9am-12pm
<<PAGE>>
If a delivery falls on a public holiday, we come the next working day.
We don't deliver between 24 December and 5 January; your December visit
brings extra items to cover the break.

4. IF YOU'RE AWAY OR IN HOSPITAL
Call us at least 2 working days before your delivery day and we'll skip
that visit. If you move into a rest home, or in with family, let us know
your new address and we'll move you to the right round.

5. WHAT IF SOMETHING GOES WRONG?
We know things get lost or damaged at home. If an item is missing at the
next visit, our volunteer will ask you to look for it before the follow-
ing visit. We never charge Home Delivery customers overdue fines, rentals
or processing fees. For a lost item, we may ask for a contribution to the
replacement cost, up to a maximum of NZD 20.00 per item, and we will
talk with you or your family about it first.

6. CONTACT THE HOME DELIVERY TEAM
Home Delivery coordinator: (06) 555 0163
Monday to Thursday, 9am to 3pm. Leave a message at other times.
Email: homedelivery@libraries.wrenfield.example

To refer someone, such as a client, parent or neighbour, call us or fill
in the referral form at any library. We'll phone within 5 working days to
arrange a first visit.
""",
)

DOCS["medirun/savings-club-guide"] = (
    "Medirun Savings Club: member guide 2026",
    "Medirun Pharmacy, LLC - Savings Club member guide - effective January 1, 2026",
    """
# Medirun Savings Club: member guide
Low, set prices on common generic medications when you pay without
insurance. Effective January 1, 2026.

1. WHAT THE SAVINGS CLUB IS
The Savings Club is a cash-price membership. It is not insurance, and it
does not meet the minimum coverage requirements of the Affordable Care
Act. You pay a membership fee, and in return you pay the Club price shown
below for each fill instead of our regular cash price.

2. MEMBERSHIP FEES
Individual membership      USD 49.00 a year, or USD 5.00 a month
Family membership          USD 89.00 a year, covers up to 6 people
                           living at the same address
A family membership can include children, a spouse or partner and
dependent adults. Pets are not covered.

3. CLUB PRICES
Prices include shipping by Standard mail. Strengths not listed are priced
at our regular cash price less 20 percent.

Medication and strength        30-day supply    90-day supply
Lisinopril 10 mg               USD 4.00         USD 9.00
Metformin ER 500 mg            USD 5.00         USD 12.00
Atorvastatin 20 mg             USD 6.00         USD 14.00
Amlodipine 5 mg                USD 4.00         USD 9.00
Levothyroxine 50 mcg           USD 8.00         USD 18.00
Sertraline 50 mg               USD 7.00         USD 16.00
Albuterol inhaler              USD 22.00*       Not available
* Price per inhaler. Up to 2 inhalers per fill.
<<PAGE>>
4. HOW TO USE IT
Join in the app under Account > Savings Club, or call Member Services at
1-800-555-0150. Your Club prices apply to any order placed after you join.
If you have insurance, we will compare your copay with the Club price and
charge you the lower one, but a single fill cannot use both.

Club prices can't be combined with manufacturer coupons or copay cards,
and they can't be used for Schedule II controlled substances or for
cold-chain medications.

5. CANCELLING
You can cancel at any time in the app or by phone. Monthly memberships
stop at the end of the month you cancel in. If you cancel an annual mem-
bership within 30 days of joining and have not had any fills at Club
prices, we will refund the full annual fee. After that, annual fees are
not refunded.

6. CHANGES TO CLUB PRICES
We review Club prices every January and July. We will email members at
least 30 days before a Club price goes up. Your membership fee stays the
same until your next renewal date.

Questions? Call Member Services at 1-800-555-0150 or visit
help.medirun.example/savings-club.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "wrenfield make_pdfs.py")


if __name__ == "__main__":
    main()
